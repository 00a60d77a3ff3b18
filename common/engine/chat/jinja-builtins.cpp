// Jinja2's built-in filters and tests (the ones chat templates use, with Jinja2's argument names
// and defaults), Hugging Face's tojson override, and the global functions: range (with the
// sandbox's 100000-item cap), namespace, dict, raise_exception and strftime_now.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json-text.h"
#include "engine/chat/jinja-interp.h"
#include "engine/chat/jinja-json.h"
#include "engine/chat/py-string.h"

namespace nurl::jinja {

namespace {

Error filter_error(const std::string& msg) { return Error(Code::invalid_argument, msg); }

Value arg_or(const Args& a, size_t i, std::string_view name, Value dflt) {
  const Value* v = a.get(i, name);
  return v ? *v : std::move(dflt);
}

Result<std::string> str_arg(const Args& a, size_t i, std::string_view name, const char* dflt) {
  const Value* v = a.get(i, name);
  if (!v) return std::string(dflt);
  return py_str(*v);
}

Result<int64_t> int_arg(const Args& a, size_t i, std::string_view name, int64_t dflt) {
  const Value* v = a.get(i, name);
  if (!v || v->is_none()) return dflt;
  if (!v->is_int_like()) return type_error(std::string("'") + std::string(name) + "' must be an integer, not " + type_name(*v));
  return v->as_int();
}

// Jinja2's make_attrgetter: "a.b.0" looks up each part with getitem semantics.
Result<Value> get_attribute(Interp& in, Value v, const std::string& path) {
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t dot = path.find('.', pos);
    if (dot == std::string::npos) dot = path.size();
    std::string part = path.substr(pos, dot - pos);
    Value key = Value::string(part);
    if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      key = Value::integer(std::stoll(part));
    NURL_ASSIGN(v, in.getitem(v, key));
    pos = dot + 1;
  }
  return v;
}

// Jinja2 returns a generator here: mark the list so truthiness and len() behave as there.
Result<Value> lazy(Interp& in, std::vector<Value> items, const char* type = "generator") {
  NURL_ASSIGN(Value v, in.make_list(std::move(items)));
  v.list()->lazy = type;
  return v;
}

Value ignore_case(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(py::lower(v.str()));
  return v;
}

Result<int64_t> length_of(const Value& v) {
  switch (v.kind()) {
    case Kind::undefined: return int64_t{0};
    case Kind::string: return static_cast<int64_t>(py::length(v.str()));
    case Kind::list:
      if (v.list()->lazy) return type_error(std::string("object of type '") + v.list()->lazy + "' has no len()");
      return static_cast<int64_t>(v.list()->items.size());
    case Kind::dict:
    case Kind::ns: return static_cast<int64_t>(v.dict()->entries.size());
    case Kind::loop: return static_cast<int64_t>(v.loop_state()->items.size());
    default: return type_error(std::string("object of type '") + type_name(v) + "' has no len()");
  }
}

// Stable sort by key with Python ordering; the first comparison error is returned.
Result<void> sort_values(std::vector<std::pair<Value, Value>>& kv, bool reverse) {
  std::optional<Error> err;
  std::stable_sort(kv.begin(), kv.end(), [&](const auto& a, const auto& b) {
    if (err) return false;
    auto c = py_compare(a.first, b.first, "<");
    if (!c.ok()) {
      err = c.error();
      return false;
    }
    return reverse ? *c > 0 : *c < 0;
  });
  if (err) return *err;
  return ok();
}

Result<Value> tojson(Interp& in, const Value& v, const Args& a) {
  // transformers: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
  JsonOptions o;
  o.ensure_ascii = truthy(arg_or(a, 0, "ensure_ascii", Value::boolean(false)));
  Value indent = arg_or(a, 1, "indent", Value::none());
  if (indent.is_int_like()) {
    o.indent = std::string(static_cast<size_t>(std::clamp<int64_t>(indent.as_int(), 0, 64)), ' ');
  } else if (indent.is_string()) {
    o.indent = indent.str();
  } else if (!indent.is_none() && !indent.is_undefined()) {
    return type_error("tojson indent must be an int or a string");
  }
  if (o.indent) o.item_sep = ",";
  Value seps = arg_or(a, 2, "separators", Value::none());
  if (seps.is_list()) {
    if (seps.list()->items.size() != 2 || !seps.list()->items[0].is_string() || !seps.list()->items[1].is_string())
      return type_error("tojson separators must be a pair of strings");
    o.item_sep = seps.list()->items[0].str();
    o.key_sep = seps.list()->items[1].str();
  }
  o.sort_keys = truthy(arg_or(a, 3, "sort_keys", Value::boolean(false)));
  NURL_ASSIGN(std::string s, to_json(v, o));
  return in.make_string(std::move(s));
}

// Jinja2's do_indent.
std::string indent_text(std::string s, const std::string& ind, bool first, bool blank) {
  s += "\n";  // Jinja2 appends one so that splitlines keeps a trailing empty line
  std::vector<std::string> lines = py::splitlines(s);
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + ind : "") + lines[i];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? lines[i] : ind + lines[i]);
  }
  if (first) rv = ind + rv;
  return rv;
}

// Python's round(x, n) for floats: round half to even on the decimal value.
double py_round(double x, int64_t n) {
  if (!std::isfinite(x)) return x;
  char buf[64];
  const int prec = static_cast<int>(std::clamp<int64_t>(n, 0, 30));
  std::snprintf(buf, sizeof buf, "%.*f", prec, x);  // glibc rounds the exact binary value half-even
  return std::strtod(buf, nullptr);
}

Result<Value> select_like(Interp& in, const Value& seq, Args& a, bool by_attr, bool keep) {
  if (!truthy(seq)) return lazy(in, {});  // Jinja2: `if seq: for item in seq: ...`
  NURL_ASSIGN(std::vector<Value> items, in.iterate(seq));
  size_t base = 0;
  std::string attr;
  if (by_attr) {
    if (a.pos.empty()) return filter_error("selectattr/rejectattr need an attribute name");
    NURL_ASSIGN(attr, py_str(a.pos[0]));
    base = 1;
  }
  std::string test;
  if (a.pos.size() > base) {
    NURL_ASSIGN(test, py_str(a.pos[base]));
  }
  Args targs;
  for (size_t i = base + 1; i < a.pos.size(); ++i) targs.pos.push_back(a.pos[i]);
  targs.kw = a.kw;
  std::vector<Value> out;
  for (const auto& item : items) {
    NURL_TRY(in.step());
    Value v = item;
    if (by_attr) {
      NURL_ASSIGN(v, get_attribute(in, item, attr));
    }
    bool r;
    if (test.empty()) {
      r = truthy(v);
    } else {
      NURL_ASSIGN(r, call_test(in, test, v, targs));
    }
    if (r == keep) out.push_back(item);
  }
  return lazy(in, std::move(out));
}

Result<Value> min_max(Interp& in, const Value& seq, const Args& a, bool want_max) {
  NURL_ASSIGN(std::vector<Value> items, in.iterate(seq));
  const bool cs = truthy(arg_or(a, 0, "case_sensitive", Value::boolean(false)));
  const Value* attr = a.get(1, "attribute");
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  Value best_key;
  for (size_t i = 0; i < items.size(); ++i) {
    Value k = items[i];
    if (attr && !attr->is_none()) {
      NURL_ASSIGN(std::string path, py_str(*attr));
      NURL_ASSIGN(k, get_attribute(in, k, path));
    }
    k = ignore_case(k, cs);
    if (i == 0) {
      best_key = k;
      continue;
    }
    NURL_ASSIGN(int c, py_compare(k, best_key, want_max ? ">" : "<"));
    if (want_max ? c > 0 : c < 0) {
      best = i;
      best_key = k;
    }
  }
  return items[best];
}

Result<Value> to_int(const Value& v, const Args& a) {
  Value dflt = arg_or(a, 0, "default", Value::integer(0));
  NURL_ASSIGN(int64_t base, int_arg(a, 1, "base", 10));
  if (v.is_int_like()) return Value::integer(v.as_int());
  if (v.kind() == Kind::floating) {
    if (!std::isfinite(v.as_float()) || std::fabs(v.as_float()) >= 9.2e18) return dflt;
    return Value::integer(static_cast<int64_t>(v.as_float()));
  }
  if (v.is_string()) {
    std::string s = py::strip(v.str(), std::nullopt, true, true);
    std::string digits;
    for (char c : s)
      if (c != '_') digits += c;
    if (base >= 2 && base <= 36 && !digits.empty()) {
      errno = 0;
      char* end = nullptr;
      long long n = std::strtoll(digits.c_str(), &end, static_cast<int>(base));
      if (errno == 0 && end && *end == '\0') return Value::integer(n);
    }
    // "42.23"|int gives 42: Jinja2 retries through float().
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == '\0' && std::isfinite(d) && std::fabs(d) < 9.2e18)
      return Value::integer(static_cast<int64_t>(d));
  }
  return dflt;
}

Result<Value> to_float(const Value& v, const Args& a) {
  Value dflt = arg_or(a, 0, "default", Value::floating(0.0));
  if (v.is_number()) return Value::floating(v.as_float());
  if (v.is_string()) {
    std::string s = py::strip(v.str(), std::nullopt, true, true);
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == '\0') return Value::floating(d);
  }
  return dflt;
}

}  // namespace

Result<Value> call_filter(Interp& in, const std::string& name, const Value& v, Args& a) {
  NURL_TRY(in.step());
  if (name == "tojson") return tojson(in, v, a);
  if (name == "safe" || name == "e" || name == "escape" || name == "forceescape") {
    NURL_ASSIGN(std::string s, py_str(v));
    if (name == "safe" || (v.is_markup() && name != "forceescape")) return Value::markup(std::move(s));
    return Value::markup(html_escape(s));
  }
  if (name == "length" || name == "count") {
    NURL_ASSIGN(int64_t n, length_of(v));
    return Value::integer(n);
  }
  // Filters built on soft_str() keep a Markup string Markup.
  auto keep = [&](std::string s) { return v.is_markup() ? Value::markup(std::move(s)) : Value::string(std::move(s)); };
  if (name == "string") {
    NURL_ASSIGN(std::string s, py_str(v));
    return keep(std::move(s));
  }
  if (name == "trim") {
    NURL_ASSIGN(std::string s, py_str(v));
    const Value* chars = a.get(0, "chars");
    std::optional<std::string> cs;
    if (chars && !chars->is_none()) {
      NURL_ASSIGN(cs, py_str(*chars));
    }
    return keep(py::strip(s, cs, true, true));
  }
  if (name == "upper" || name == "lower" || name == "capitalize" || name == "title") {
    NURL_ASSIGN(std::string s, py_str(v));
    if (name == "upper") return keep(py::upper(s));
    if (name == "lower") return keep(py::lower(s));
    if (name == "capitalize") return keep(py::capitalize(s));
    // Jinja2's title: split before runs of [-\s({[<]; each piece gets its first char upper-cased.
    std::u32string u = py::decode(s), out;
    bool at_start = true;
    for (char32_t c : u) {
      const bool delim = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py::is_space(c);
      if (delim) {
        out.push_back(c);
        at_start = true;
      } else {
        out.push_back(at_start ? py::to_upper(c) : py::to_lower(c));
        at_start = false;
      }
    }
    return keep(py::encode(out));
  }
  if (name == "default" || name == "d") {
    Value dflt = arg_or(a, 0, "default_value", Value::string(""));
    const bool boolean = truthy(arg_or(a, 1, "boolean", Value::boolean(false)));
    if (v.is_undefined() || (boolean && !truthy(v))) return dflt;
    return v;
  }
  if (name == "join") {
    NURL_ASSIGN(std::string sep, str_arg(a, 0, "d", ""));
    const Value* attr = a.get(1, "attribute");
    NURL_ASSIGN(std::vector<Value> items, in.iterate(v));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      Value x = items[i];
      if (attr && !attr->is_none()) {
        NURL_ASSIGN(std::string path, py_str(*attr));
        NURL_ASSIGN(x, get_attribute(in, x, path));
      }
      NURL_ASSIGN(std::string s, py_str(x));
      if (i) out += sep;
      out += s;
      if (out.size() > in.limits().max_output) return filter_error("join result exceeds the size limit");
    }
    return Value::string(std::move(out));
  }
  if (name == "first" || name == "last") {
    if (name == "last" && v.is_string()) {
      std::u32string u = py::decode(v.str());
      if (u.empty()) return Value::undefined("No last item, sequence was empty.");
      return Value::string(py::encode(u.substr(u.size() - 1)));
    }
    NURL_ASSIGN(std::vector<Value> items, in.iterate(v));
    if (items.empty()) return Value::undefined(std::string("No ") + name + " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") {
    NURL_ASSIGN(std::vector<Value> items, in.iterate(v));
    return in.make_list(std::move(items));
  }
  if (name == "items") {
    if (v.is_undefined()) return lazy(in, {});
    if (!v.is_dict()) return filter_error("Can only get item pairs from a mapping.");
    std::vector<Value> out;
    for (const auto& [k, x] : v.dict()->entries) {
      NURL_ASSIGN(Value pair, in.make_list({k, x}, true));
      out.push_back(pair);
    }
    return lazy(in, std::move(out));
  }
  if (name == "dictsort") {
    if (!v.is_dict()) return filter_error("You can only sort by either \"key\" or \"value\" of a mapping");
    const bool cs = truthy(arg_or(a, 0, "case_sensitive", Value::boolean(false)));
    NURL_ASSIGN(std::string by, str_arg(a, 1, "by", "key"));
    const bool reverse = truthy(arg_or(a, 2, "reverse", Value::boolean(false)));
    if (by != "key" && by != "value") return filter_error("You can only sort by either \"key\" or \"value\"");
    std::vector<std::pair<Value, Value>> kv;
    for (const auto& [k, x] : v.dict()->entries) {
      NURL_ASSIGN(Value pair, in.make_list({k, x}, true));
      kv.emplace_back(ignore_case(by == "key" ? k : x, cs), pair);
    }
    NURL_TRY(sort_values(kv, reverse));
    std::vector<Value> out;
    for (auto& p : kv) out.push_back(p.second);
    return in.make_list(std::move(out));
  }
  if (name == "sort") {
    NURL_ASSIGN(std::vector<Value> items, in.iterate(v));
    const bool reverse = truthy(arg_or(a, 0, "reverse", Value::boolean(false)));
    const bool cs = truthy(arg_or(a, 1, "case_sensitive", Value::boolean(false)));
    const Value* attr = a.get(2, "attribute");
    std::vector<std::pair<Value, Value>> kv;
    for (const auto& x : items) {
      Value k = x;
      if (attr && !attr->is_none()) {
        NURL_ASSIGN(std::string path, py_str(*attr));
        NURL_ASSIGN(k, get_attribute(in, x, path));
      }
      kv.emplace_back(ignore_case(k, cs), x);
    }
    NURL_TRY(sort_values(kv, reverse));
    std::vector<Value> out;
    for (auto& p : kv) out.push_back(p.second);
    return in.make_list(std::move(out));
  }
  if (name == "unique") {
    NURL_ASSIGN(std::vector<Value> items, in.iterate(v));
    const bool cs = truthy(arg_or(a, 0, "case_sensitive", Value::boolean(false)));
    const Value* attr = a.get(1, "attribute");
    std::vector<Value> out, seen;
    for (const auto& x : items) {
      NURL_TRY(in.step());
      Value k = x;
      if (attr && !attr->is_none()) {
        NURL_ASSIGN(std::string path, py_str(*attr));
        NURL_ASSIGN(k, get_attribute(in, x, path));
      }
      k = ignore_case(k, cs);
      bool dup = false;
      for (const auto& s : seen) {
        NURL_ASSIGN(bool eq, py_eq(s, k));
        if (eq) {
          dup = true;
          break;
        }
      }
      if (!dup) {
        seen.push_back(k);
        out.push_back(x);
      }
    }
    return lazy(in, std::move(out));
  }
  if (name == "min" || name == "max") return min_max(in, v, a, name == "max");
  if (name == "sum") {
    NURL_ASSIGN(std::vector<Value> items, in.iterate(v));
    const Value* attr = a.get(0, "attribute");
    Value total = arg_or(a, 1, "start", Value::integer(0));
    for (const auto& x : items) {
      Value k = x;
      if (attr && !attr->is_none()) {
        NURL_ASSIGN(std::string path, py_str(*attr));
        NURL_ASSIGN(k, get_attribute(in, x, path));
      }
      NURL_ASSIGN(total, binary_op(in, "+", total, k));
    }
    return total;
  }
  if (name == "map") {
    if (!truthy(v)) return lazy(in, {});  // Jinja2: `if value: for item in value: ...`
    NURL_ASSIGN(std::vector<Value> items, in.iterate(v));
    std::vector<Value> out;
    if (const Value* attr = a.kwarg("attribute")) {
      NURL_ASSIGN(std::string path, py_str(*attr));
      const Value* dflt = a.kwarg("default");
      for (const auto& x : items) {
        NURL_ASSIGN(Value r, get_attribute(in, x, path));
        if (r.is_undefined() && dflt) r = *dflt;
        out.push_back(r);
      }
      return lazy(in, std::move(out));
    }
    if (a.pos.empty()) return filter_error("map requires a filter argument");
    NURL_ASSIGN(std::string fname, py_str(a.pos[0]));
    Args fargs;
    fargs.pos.assign(a.pos.begin() + 1, a.pos.end());
    fargs.kw = a.kw;
    for (const auto& x : items) {
      NURL_ASSIGN(Value r, call_filter(in, fname, x, fargs));
      out.push_back(r);
    }
    return lazy(in, std::move(out));
  }
  if (name == "select" || name == "reject") return select_like(in, v, a, false, name == "select");
  if (name == "selectattr" || name == "rejectattr") return select_like(in, v, a, true, name == "selectattr");
  if (name == "replace") {
    NURL_ASSIGN(std::string s, py_str(v));
    NURL_ASSIGN(std::string old, str_arg(a, 0, "old", ""));
    NURL_ASSIGN(std::string repl, str_arg(a, 1, "new", ""));
    NURL_ASSIGN(int64_t count, int_arg(a, 2, "count", -1));
    if (!old.empty() && !repl.empty() && repl.size() > old.size() &&
        (s.size() / old.size()) * (repl.size() - old.size()) + s.size() > in.limits().max_output)
      return filter_error("replace result exceeds the size limit");
    return in.make_string(py::replace(s, old, repl, count));
  }
  if (name == "indent") {
    if (!v.is_string()) return type_error(std::string("indent needs a string, not ") + type_name(v));
    const std::string& s = v.str();
    Value width = arg_or(a, 0, "width", Value::integer(4));
    std::string ind;
    if (width.is_string()) {
      ind = width.str();
    } else if (width.is_int_like()) {
      ind = std::string(static_cast<size_t>(std::clamp<int64_t>(width.as_int(), 0, 1024)), ' ');
    } else {
      return type_error("indent width must be an int or a string");
    }
    const bool first = truthy(arg_or(a, 1, "first", Value::boolean(false)));
    const bool blank = truthy(arg_or(a, 2, "blank", Value::boolean(false)));
    return in.make_string(indent_text(s, ind, first, blank));
  }
  if (name == "int") return to_int(v, a);
  if (name == "float") return to_float(v, a);
  if (name == "abs") {
    if (v.is_int_like()) {
      if (v.as_int() == INT64_MIN) return filter_error("integer overflow");
      return Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    if (v.kind() == Kind::floating) return Value::floating(std::fabs(v.as_float()));
    return type_error(std::string("bad operand type for abs(): '") + type_name(v) + "'");
  }
  if (name == "round") {
    NURL_ASSIGN(int64_t prec, int_arg(a, 0, "precision", 0));
    NURL_ASSIGN(std::string method, str_arg(a, 1, "method", "common"));
    if (!v.is_number()) return type_error(std::string("type ") + type_name(v) + " doesn't define __round__ method");
    const double x = v.as_float();
    if (method == "common") {
      if (v.is_int_like()) return Value::integer(v.as_int());
      return Value::floating(py_round(x, prec));
    }
    const double m = std::pow(10.0, static_cast<double>(prec));
    if (method == "ceil") return Value::floating(std::ceil(x * m) / m);
    if (method == "floor") return Value::floating(std::floor(x * m) / m);
    return filter_error("method must be common, ceil or floor");
  }
  if (name == "reverse") {
    if (v.is_string()) {
      std::u32string u = py::decode(v.str());
      std::reverse(u.begin(), u.end());
      return Value::string(py::encode(u));
    }
    NURL_ASSIGN(std::vector<Value> items, in.iterate(v));
    std::reverse(items.begin(), items.end());
    return lazy(in, std::move(items), v.is_dict() ? "dict_reversekeyiterator" : "list_reverseiterator");
  }
  if (name == "center") {
    NURL_ASSIGN(std::string s, py_str(v));
    NURL_ASSIGN(int64_t width, int_arg(a, 0, "width", 80));
    const int64_t len = static_cast<int64_t>(py::length(s));
    if (width <= len) return Value::string(s);
    width = std::min<int64_t>(width, static_cast<int64_t>(in.limits().max_output));
    const int64_t pad = width - len;
    const int64_t left = pad / 2 + (pad & width & 1);  // CPython's str.center split
    return Value::string(std::string(static_cast<size_t>(left), ' ') + s +
                         std::string(static_cast<size_t>(pad - left), ' '));
  }
  if (name == "wordcount") {
    NURL_ASSIGN(std::string s, py_str(v));
    int64_t n = 0;
    bool in_word = false;
    for (char32_t c : py::decode(s)) {
      const bool w = py::is_alpha(c) || py::is_digit(c) || c == '_';
      if (w && !in_word) ++n;
      in_word = w;
    }
    return Value::integer(n);
  }
  if (name == "truncate") {
    NURL_ASSIGN(std::string s, py_str(v));
    NURL_ASSIGN(int64_t length, int_arg(a, 0, "length", 255));
    const bool killwords = truthy(arg_or(a, 1, "killwords", Value::boolean(false)));
    NURL_ASSIGN(std::string end, str_arg(a, 2, "end", "..."));
    NURL_ASSIGN(int64_t leeway, int_arg(a, 3, "leeway", 5));
    std::u32string u = py::decode(s);
    if (static_cast<int64_t>(u.size()) <= length + leeway) return Value::string(s);
    const int64_t keep = std::max<int64_t>(0, length - static_cast<int64_t>(py::length(end)));
    std::u32string cut = u.substr(0, static_cast<size_t>(keep));
    if (killwords) return Value::string(py::encode(cut) + end);
    const size_t sp = cut.rfind(U' ');
    if (sp != std::u32string::npos) cut = cut.substr(0, sp);
    return Value::string(py::encode(cut) + end);
  }
  if (name == "attr") {
    NURL_ASSIGN(std::string n, str_arg(a, 0, "name", ""));
    return in.getattr(v, n);
  }
  if (name == "pprint") {
    NURL_ASSIGN(std::string s, py_repr(v));
    return Value::string(std::move(s));
  }
  if (name == "format") {
    if (!v.is_string()) return type_error("format needs a string");
    NURL_ASSIGN(Value args, in.make_list(a.pos, true));
    return binary_op(in, "%", v, args);
  }
  if (name == "from_json") {
    if (!v.is_string()) return type_error(std::string("from_json needs a string, not ") + type_name(v));
    auto j = parse_ordered_json(v.str());
    if (j.is_discarded()) return filter_error("from_json: invalid JSON");
    return from_json(in, j);
  }
  return filter_error("no filter named '" + name + "'");
}

Result<bool> call_test(Interp& in, const std::string& name, const Value& v, Args& a) {
  NURL_TRY(in.step());
  const Kind k = v.kind();
  if (name == "defined") return k != Kind::undefined;
  if (name == "undefined") return k == Kind::undefined;
  if (name == "none") return k == Kind::none;
  if (name == "boolean") return k == Kind::boolean;
  if (name == "true") return k == Kind::boolean && v.as_bool();
  if (name == "false") return k == Kind::boolean && !v.as_bool();
  if (name == "integer") return k == Kind::integer;
  if (name == "float") return k == Kind::floating;
  if (name == "number") return v.is_number();
  if (name == "string") return k == Kind::string;
  if (name == "mapping") return k == Kind::dict;
  if (name == "iterable") return k == Kind::string || k == Kind::list || k == Kind::dict || k == Kind::undefined;
  if (name == "sequence") return k == Kind::string || k == Kind::list || k == Kind::dict;
  if (name == "callable") return k == Kind::callable;
  if (name == "escaped") return false;
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    bool cased = false;
    for (char32_t c : py::decode(v.str())) {
      if (name == "lower" ? py::is_cased_upper(c) : py::is_cased_lower(c)) return false;
      cased = cased || py::is_cased_upper(c) || py::is_cased_lower(c);
    }
    return cased;
  }
  if (name == "even" || name == "odd" || name == "divisibleby") {  // value % n == 0, Python style
    Value n = Value::integer(2);
    if (name == "divisibleby") {
      const Value* arg = a.get(0, "num");
      if (!arg) return type_error("divisibleby needs an argument");
      n = *arg;
    }
    NURL_ASSIGN(Value r, binary_op(in, "%", v, n));
    return r.is_number() && r.as_float() == (name == "odd" ? 1.0 : 0.0);
  }
  const Value* other = a.get(0, "b");
  if (name == "sameas") {
    if (!other) return type_error("sameas needs an argument");
    if (v.kind() != other->kind()) return false;
    if (k == Kind::none || k == Kind::undefined) return true;
    if (k == Kind::boolean || k == Kind::integer) return v.as_int() == other->as_int();
    if (k == Kind::list || k == Kind::dict || k == Kind::ns || k == Kind::callable) return v.dict() == other->dict();
    return false;
  }
  if (name == "eq" || name == "equalto" || name == "==" || name == "ne" || name == "!=") {
    if (!other) return type_error(name + " test needs an argument");
    NURL_ASSIGN(bool eq, py_eq(v, *other));
    return (name == "ne" || name == "!=") ? !eq : eq;
  }
  if (name == "lt" || name == "lessthan" || name == "<" || name == "le" || name == "<=" || name == "gt" ||
      name == "greaterthan" || name == ">" || name == "ge" || name == ">=") {
    if (!other) return type_error(name + " test needs an argument");
    NURL_ASSIGN(int c, py_compare(v, *other, "<"));
    if (name == "lt" || name == "lessthan" || name == "<") return c < 0;
    if (name == "le" || name == "<=") return c <= 0;
    if (name == "gt" || name == "greaterthan" || name == ">") return c > 0;
    return c >= 0;
  }
  if (name == "in") {
    const Value* seq = a.get(0, "seq");
    if (!seq) return type_error("in test needs an argument");
    return contains(*seq, v);
  }
  return Error(Code::invalid_argument, "no test named '" + name + "'");
}

// ---- global functions ------------------------------------------------------------------------

const char* const kGlobalFunctions[] = {"range", "namespace", "dict", "raise_exception", "strftime_now", nullptr};

namespace {

constexpr int64_t kMaxRange = 100000;  // Jinja2's sandbox refuses bigger ranges

constexpr const char* kDays[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
constexpr const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                   "July",    "August",   "September", "October", "November", "December"};

// C-locale strftime for the common conversions, with glibc's '-' flag (no padding).
std::string format_time(const std::tm& t, const std::string& fmt) {
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 >= fmt.size()) {
      out += fmt[i];
      continue;
    }
    bool no_pad = false;
    size_t j = i + 1;
    if (fmt[j] == '-' && j + 1 < fmt.size()) {
      no_pad = true;
      ++j;
    }
    auto num = [&](int v, int width) {
      std::string s = std::to_string(v);
      if (!no_pad && static_cast<int>(s.size()) < width) s = std::string(static_cast<size_t>(width) - s.size(), '0') + s;
      out += s;
    };
    const int wday = ((t.tm_wday % 7) + 7) % 7;
    const int mon = ((t.tm_mon % 12) + 12) % 12;
    switch (fmt[j]) {
      case 'Y': num(t.tm_year + 1900, 1); break;
      case 'y': num((t.tm_year + 1900) % 100, 2); break;
      case 'm': num(t.tm_mon + 1, 2); break;
      case 'd': num(t.tm_mday, 2); break;
      case 'e': {
        std::string s = std::to_string(t.tm_mday);
        out += (!no_pad && s.size() < 2 ? " " : "") + s;
        break;
      }
      case 'H': num(t.tm_hour, 2); break;
      case 'I': num(t.tm_hour % 12 == 0 ? 12 : t.tm_hour % 12, 2); break;
      case 'M': num(t.tm_min, 2); break;
      case 'S': num(t.tm_sec, 2); break;
      case 'j': num(t.tm_yday + 1, 3); break;
      case 'p': out += t.tm_hour < 12 ? "AM" : "PM"; break;
      case 'a': out += std::string(kDays[wday]).substr(0, 3); break;
      case 'A': out += kDays[wday]; break;
      case 'b':
      case 'h': out += std::string(kMonths[mon]).substr(0, 3); break;
      case 'B': out += kMonths[mon]; break;
      case '%': out += '%'; break;
      default: out += fmt.substr(i, j - i + 1); break;  // unknown: kept as written
    }
    i = j;
  }
  return out;
}

}  // namespace

Result<Value> call_global(Interp& in, const std::string& name, Args& a) {
  NURL_TRY(in.step());
  if (name == "raise_exception") {
    std::string msg = "raise_exception() called";
    if (!a.pos.empty()) {
      NURL_ASSIGN(msg, py_str(a.pos[0]));
    }
    return Error(Code::invalid_argument, msg);
  }
  if (name == "strftime_now") {
    NURL_ASSIGN(std::string fmt, str_arg(a, 0, "format", ""));
    std::tm t{};
    if (in.clock()) {
      t = in.clock()();
    } else {
      std::time_t now = std::time(nullptr);
      localtime_r(&now, &t);
    }
    return Value::string(format_time(t, fmt));
  }
  if (name == "range") {
    int64_t start = 0, stop = 0, step = 1;
    for (const auto& v : a.pos)
      if (!v.is_int_like()) return type_error(std::string("'") + type_name(v) + "' object cannot be interpreted as an integer");
    if (a.pos.size() == 1) {
      stop = a.pos[0].as_int();
    } else if (a.pos.size() == 2 || a.pos.size() == 3) {
      start = a.pos[0].as_int();
      stop = a.pos[1].as_int();
      if (a.pos.size() == 3) step = a.pos[2].as_int();
    } else {
      return type_error("range expected 1 to 3 arguments");
    }
    if (step == 0) return Error(Code::invalid_argument, "ValueError: range() arg 3 must not be zero");
    const long double n = step > 0 ? (static_cast<long double>(stop) - start + step - 1) / step
                                    : (static_cast<long double>(start) - stop - step - 1) / -step;
    if (n > kMaxRange)
      return Error(Code::invalid_argument, "OverflowError: Range too big. The sandbox blocks ranges larger than " +
                                               std::to_string(kMaxRange) + ".");
    std::vector<Value> items;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) items.push_back(Value::integer(i));
    return in.make_list(std::move(items));
  }
  if (name == "namespace" || name == "dict") {
    NURL_ASSIGN(DictObj * d, in.heap().new_dict());
    for (const auto& init : a.pos) {
      if (!init.is_dict()) return type_error(name + "() positional argument must be a mapping");
      for (const auto& [k, v] : init.dict()->entries) {
        NURL_TRY(in.heap().charge(value_cost(k) + value_cost(v)));
        d->set(k, v);
      }
    }
    for (const auto& [k, v] : a.kw) {
      NURL_TRY(in.heap().charge(k.size() + value_cost(v)));
      d->set(Value::string(k), v);
    }
    return name == "namespace" ? Value::ns(d) : Value::dict(d);
  }
  return Error(Code::invalid_argument, "no function named '" + name + "'");
}

}  // namespace nurl::jinja
