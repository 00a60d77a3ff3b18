// Python semantics for jinja::Value: the printed forms are byte-compatible with CPython's
// str()/repr() and json.dumps, because chat templates print dicts, floats and JSON into prompts.
#include "engine/chat/jinja-value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/utf8.h"

namespace nurl::jinja {

namespace {

Error nesting_error() {
  return Error(Code::invalid_argument, "value nested more than " + std::to_string(kMaxNesting) +
                                           " levels deep (a container that contains itself?)");
}

}  // namespace

// ---- DictObj ---------------------------------------------------------------------------------

const Value* DictObj::find(std::string_view key) const {
  auto it = str_index.find(std::string(key));
  return it == str_index.end() ? nullptr : &entries[it->second].second;
}

const Value* DictObj::find(const Value& key) const {
  if (key.is_string()) return find(std::string_view(key.str()));
  for (const auto& [k, v] : entries) {
    auto eq = py_eq(k, key);
    if (eq.ok() && *eq) return &v;
  }
  return nullptr;
}

void DictObj::set(const Value& key, Value v) {
  if (key.is_string()) {
    auto it = str_index.find(key.str());
    if (it != str_index.end()) {
      entries[it->second].second = std::move(v);
      return;
    }
    str_index.emplace(key.str(), entries.size());
    entries.emplace_back(key, std::move(v));
    return;
  }
  for (auto& [k, old] : entries) {
    auto eq = py_eq(k, key);
    if (eq.ok() && *eq) {
      old = std::move(v);
      return;
    }
  }
  entries.emplace_back(key, std::move(v));
}

bool DictObj::erase(const Value& key) {
  for (size_t i = 0; i < entries.size(); ++i) {
    auto eq = py_eq(entries[i].first, key);
    if (eq.ok() && *eq) {
      entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i));
      str_index.clear();
      for (size_t j = 0; j < entries.size(); ++j)
        if (entries[j].first.is_string()) str_index.emplace(entries[j].first.str(), j);
      return true;
    }
  }
  return false;
}

// ---- Heap ------------------------------------------------------------------------------------

Result<void> Heap::charge(size_t bytes) {
  used_ += bytes;
  if (used_ > max_bytes_)
    return Error(Code::invalid_argument,
                 "template exceeded its memory budget of " + std::to_string(max_bytes_) + " bytes");
  return ok();
}

Result<ListObj*> Heap::new_list(bool tuple) {
  NURL_TRY(charge(sizeof(ListObj)));
  lists_.push_back(std::make_unique<ListObj>());
  lists_.back()->tuple = tuple;
  return lists_.back().get();
}

Result<DictObj*> Heap::new_dict() {
  NURL_TRY(charge(sizeof(DictObj)));
  dicts_.push_back(std::make_unique<DictObj>());
  return dicts_.back().get();
}

Result<Callable*> Heap::new_callable() {
  NURL_TRY(charge(sizeof(Callable)));
  callables_.push_back(std::make_unique<Callable>());
  return callables_.back().get();
}

Result<LoopState*> Heap::new_loop() {
  NURL_TRY(charge(sizeof(LoopState)));
  loops_.push_back(std::make_unique<LoopState>());
  return loops_.back().get();
}

size_t value_cost(const Value& v) { return sizeof(Value) + (v.is_string() ? v.str().size() : 0); }

// ---- truthiness, names, equality, ordering ---------------------------------------------------

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::undefined:
    case Kind::none: return false;
    case Kind::boolean:
    case Kind::integer: return v.as_int() != 0;
    case Kind::floating: return v.as_float() != 0.0;
    case Kind::string: return !v.str().empty();
    case Kind::list: return v.list()->lazy || !v.list()->items.empty();
    case Kind::dict: return !v.dict()->entries.empty();
    default: return true;
  }
}

const char* type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::undefined: return "Undefined";
    case Kind::none: return "NoneType";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::floating: return "float";
    case Kind::string: return v.is_markup() ? "Markup" : "str";
    case Kind::list: return v.list()->lazy ? v.list()->lazy : v.list()->tuple ? "tuple" : "list";
    case Kind::dict: return "dict";
    case Kind::ns: return "Namespace";
    case Kind::callable: return v.fn()->kind == CallableKind::macro ? "Macro" : "function";
    case Kind::loop: return "LoopContext";
  }
  return "object";
}

namespace {

Result<bool> eq_at(const Value& a, const Value& b, int depth) {
  if (depth > kMaxNesting) return nesting_error();
  if (a.is_number() && b.is_number()) {
    if (a.is_int_like() && b.is_int_like()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::undefined:
    case Kind::none: return true;
    case Kind::string: return a.str() == b.str();
    case Kind::list: {
      const auto& x = a.list()->items;
      const auto& y = b.list()->items;
      if (a.list() == b.list()) return true;
      if (a.list()->lazy || b.list()->lazy) return false;  // iterators compare by identity
      if (a.list()->tuple != b.list()->tuple || x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        NURL_ASSIGN(bool e, eq_at(x[i], y[i], depth + 1));
        if (!e) return false;
      }
      return true;
    }
    case Kind::dict: {
      const DictObj* x = a.dict();
      const DictObj* y = b.dict();
      if (x == y) return true;
      if (x->entries.size() != y->entries.size()) return false;
      for (const auto& [k, v] : x->entries) {
        const Value* w = y->find(k);
        if (!w) return false;
        NURL_ASSIGN(bool e, eq_at(v, *w, depth + 1));
        if (!e) return false;
      }
      return true;
    }
    case Kind::ns:
    case Kind::callable:
    case Kind::loop: return a.dict() == b.dict();  // identity (same pointer slot)
    default: return false;
  }
}

Result<int> cmp_at(const Value& a, const Value& b, const char* op, int depth) {
  if (depth > kMaxNesting) return nesting_error();
  if (a.is_undefined()) return Error(Code::invalid_argument, "UndefinedError: " + a.str());
  if (b.is_undefined()) return Error(Code::invalid_argument, "UndefinedError: " + b.str());
  if (a.is_number() && b.is_number()) {
    if (a.is_int_like() && b.is_int_like()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
    double x = a.as_float(), y = b.as_float();
    return x < y ? -1 : x > y ? 1 : 0;  // NaN compares equal-ish; Python gives False for both
  }
  if (a.is_string() && b.is_string()) {
    int c = a.str().compare(b.str());  // UTF-8 byte order == code point order
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list() && a.list()->tuple == b.list()->tuple && !a.list()->lazy && !b.list()->lazy) {
    const auto& x = a.list()->items;
    const auto& y = b.list()->items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      NURL_ASSIGN(bool e, eq_at(x[i], y[i], depth + 1));
      if (!e) return cmp_at(x[i], y[i], op, depth + 1);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  return type_error(std::string("'") + op + "' not supported between instances of '" + type_name(a) + "' and '" +
                    type_name(b) + "'");
}

}  // namespace

Result<bool> py_eq(const Value& a, const Value& b) { return eq_at(a, b, 0); }

Result<int> py_compare(const Value& a, const Value& b, const char* op) { return cmp_at(a, b, op, 0); }

// ---- str() and repr() ------------------------------------------------------------------------

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // [-]d[.ddd]e[+-]xx, shortest round-trip digits
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t epos = sci.find('e');
  int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (size_t i = 0; i < epos; ++i)
    if (sci[i] != '.') digits += sci[i];
  std::string out = neg ? "-" : "";
  // CPython's repr: exponent notation when the decimal exponent is < -4 or >= 16.
  if (exp < -4 || exp >= 16) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    return out + eb;
  }
  if (exp < 0) {
    out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else {
    const size_t int_len = static_cast<size_t>(exp) + 1;
    if (digits.size() <= int_len) {
      out += digits + std::string(int_len - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, int_len) + "." + digits.substr(int_len);
    }
  }
  return out;
}

namespace {

// str.isprintable(): false for controls, format characters, separators other than the space,
// surrogates and private use (unassigned code points are not tabulated here).
bool printable(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return false;
  if ((c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F || c == 0x890 || c == 0x891 ||
      c == 0x8E2 || c == 0x180E || c == 0x1680)
    return false;
  if ((c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x206F)) return false;
  if (c == 0x3000 || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) || c == 0xFFFE || c == 0xFFFF) return false;
  if ((c >= 0xD800 && c <= 0xF8FF) || c >= 0xF0000) return false;
  if (c == 0x110BD || c == 0x110CD || (c >= 0x13430 && c <= 0x1343F) || (c >= 0x1BCA0 && c <= 0x1BCA3) ||
      (c >= 0x1D173 && c <= 0x1D17A) || c == 0xE0001 || (c >= 0xE0020 && c <= 0xE007F))
    return false;
  return true;
}

void hex_escape(std::string& out, char32_t c) {
  char buf[16];
  if (c < 0x100)
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
  else if (c < 0x10000)
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
  else
    std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
  out += buf;
}

}  // namespace

std::string string_repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < s.size();) {
    char32_t c = utf8::decode(s, i);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (!printable(c)) {
      hex_escape(out, c);
    } else {
      utf8::append(out, c);
    }
  }
  out += quote;
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

Result<std::string> repr_at(const Value& v, int depth);

Result<std::string> dict_body(const DictObj* d, int depth) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, val] : d->entries) {
    if (!first) out += ", ";
    first = false;
    NURL_ASSIGN(std::string ks, repr_at(k, depth + 1));
    NURL_ASSIGN(std::string vs, repr_at(val, depth + 1));
    out += ks + ": " + vs;
  }
  return out + "}";
}

Result<std::string> repr_at(const Value& v, int depth) {
  if (depth > kMaxNesting) return nesting_error();
  switch (v.kind()) {
    case Kind::undefined: return std::string("Undefined");
    case Kind::string: return v.is_markup() ? "Markup(" + string_repr(v.str()) + ")" : string_repr(v.str());
    case Kind::list: {
      const ListObj* l = v.list();
      if (l->lazy) return std::string("<") + l->lazy + " object>";
      std::string out = l->view ? std::string(l->view) + "([" : l->tuple ? "(" : "[";
      for (size_t i = 0; i < l->items.size(); ++i) {
        if (i) out += ", ";
        NURL_ASSIGN(std::string s, repr_at(l->items[i], depth + 1));
        out += s;
      }
      if (l->tuple && l->items.size() == 1) out += ",";
      return out + (l->view ? "])" : l->tuple ? ")" : "]");
    }
    case Kind::dict: return dict_body(v.dict(), depth);
    case Kind::ns: {
      NURL_ASSIGN(std::string body, dict_body(v.dict(), depth));
      return "<Namespace " + body + ">";
    }
    default: return py_str(v);
  }
}

}  // namespace

Result<std::string> py_str(const Value& v) {
  switch (v.kind()) {
    case Kind::undefined: return std::string();
    case Kind::none: return std::string("None");
    case Kind::boolean: return std::string(v.as_bool() ? "True" : "False");
    case Kind::integer: return std::to_string(v.as_int());
    case Kind::floating: return float_repr(v.as_float());
    case Kind::string: return v.str();
    case Kind::callable: {
      const Callable* c = v.fn();
      if (c->kind == CallableKind::macro) return "<Macro '" + c->name + "'>";
      return "<function " + c->name + ">";
    }
    case Kind::loop: {
      const LoopState* l = v.loop_state();
      return "<LoopContext " + std::to_string(l->index0 + 1) + "/" + std::to_string(l->items.size()) + ">";
    }
    default: return repr_at(v, 0);
  }
}

Result<std::string> py_repr(const Value& v) { return repr_at(v, 0); }

// ---- json.dumps ------------------------------------------------------------------------------

namespace {

void json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      switch (b) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (b < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", b);
            out += buf;
          } else {
            out += static_cast<char>(b);
          }
      }
      continue;
    }
    size_t start = i;
    char32_t c = utf8::decode(s, i);
    if (!ensure_ascii) {
      out.append(s.substr(start, i - start));
      continue;
    }
    char buf[16];
    if (c >= 0x10000) {
      const char32_t v = c - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                    static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
    } else {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
    }
    out += buf;
  }
  out += '"';
}

std::string json_float(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return float_repr(d);
}

Result<void> dump(std::string& out, const Value& v, const JsonOptions& o, int depth) {
  if (depth > kMaxNesting) return nesting_error();
  auto newline = [&](int level) {
    out += '\n';
    for (int i = 0; i < level; ++i) out += *o.indent;
  };
  switch (v.kind()) {
    case Kind::none: out += "null"; return ok();
    case Kind::boolean: out += v.as_bool() ? "true" : "false"; return ok();
    case Kind::integer: out += std::to_string(v.as_int()); return ok();
    case Kind::floating: out += json_float(v.as_float()); return ok();
    case Kind::string: json_string(out, v.str(), o.ensure_ascii); return ok();
    case Kind::list: {
      if (v.list()->lazy)
        return type_error(std::string("Object of type ") + v.list()->lazy + " is not JSON serializable");
      const auto& items = v.list()->items;
      if (items.empty()) {
        out += "[]";
        return ok();
      }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += o.item_sep;
        if (o.indent) newline(depth + 1);
        NURL_TRY(dump(out, items[i], o, depth + 1));
      }
      if (o.indent) newline(depth);
      out += ']';
      return ok();
    }
    case Kind::dict: {
      std::vector<std::pair<std::string, const Value*>> items;
      for (const auto& [k, val] : v.dict()->entries) {
        std::string key;
        switch (k.kind()) {
          case Kind::string: key = k.str(); break;
          case Kind::integer: key = std::to_string(k.as_int()); break;
          case Kind::boolean: key = k.as_bool() ? "true" : "false"; break;
          case Kind::none: key = "null"; break;
          case Kind::floating: key = json_float(k.as_float()); break;
          default:
            return type_error(std::string("keys must be str, int, float, bool or None, not ") + type_name(k));
        }
        items.emplace_back(std::move(key), &val);
      }
      if (items.empty()) {
        out += "{}";
        return ok();
      }
      if (o.sort_keys)
        std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += o.item_sep;
        if (o.indent) newline(depth + 1);
        json_string(out, items[i].first, o.ensure_ascii);
        out += o.key_sep;
        NURL_TRY(dump(out, *items[i].second, o, depth + 1));
      }
      if (o.indent) newline(depth);
      out += '}';
      return ok();
    }
    default:
      return type_error(std::string("Object of type ") + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace

Result<std::string> to_json(const Value& v, const JsonOptions& opt) {
  std::string out;
  NURL_TRY(dump(out, v, opt, 0));
  return out;
}

}  // namespace nurl::jinja
