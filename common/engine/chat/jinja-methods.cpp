// Python methods of str, list and dict that templates call ('x'.startswith, d.get, l.append...).
// Lists and dicts are mutable here (llama.cpp allows append/pop; Hugging Face's immutable sandbox
// refuses them): a template using them renders instead of failing.
#include <algorithm>

#include "engine/chat/jinja-interp.h"
#include "engine/chat/py-string.h"

namespace nurl::jinja {

namespace {

constexpr const char* kStrMethods[] = {
    "startswith", "endswith", "strip",   "lstrip",  "rstrip",     "split",        "rsplit",  "splitlines",
    "replace",    "upper",    "lower",   "title",   "capitalize", "swapcase",     "find",    "rfind",
    "index",      "rindex",   "count",   "join",    "format",     "isdigit",      "isalpha", "isalnum",
    "isspace",    "isupper",  "islower", "zfill",   "center",     "ljust",        "rjust",   "removeprefix",
    "removesuffix", "partition", "rpartition", "isnumeric", "isdecimal", nullptr};
constexpr const char* kListMethods[] = {"append", "pop",  "insert", "extend", "remove", "index",
                                        "count",  "copy", "clear",  "reverse", "sort", nullptr};
constexpr const char* kDictMethods[] = {"get",     "items", "keys", "values", "pop", "update",
                                        "setdefault", "copy",  "clear", nullptr};

bool in_list(const char* const* names, const std::string& n) {
  for (; *names; ++names)
    if (n == *names) return true;
  return false;
}

Result<std::string> need_str(const Value* v, const char* what) {
  if (!v || !v->is_string())
    return type_error(std::string(what) + " argument must be str, not " + (v ? type_name(*v) : "nothing"));
  return v->str();
}

std::optional<std::string> opt_str(const Value* v) {
  if (!v || v->is_none() || !v->is_string()) return std::nullopt;
  return v->str();
}

int64_t opt_int(const Value* v, int64_t dflt) { return v && v->is_int_like() ? v->as_int() : dflt; }

// str.format: {} / {0} / {name} with optional !r / :spec (alignment/width only); {{ and }} escape.
Result<Value> str_format(Interp& in, const std::string& fmt, const Args& a) {
  std::string out;
  size_t auto_idx = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '}' ) {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') ++i;
      out += '}';
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const size_t close = fmt.find('}', i);
    if (close == std::string::npos) return Error(Code::invalid_argument, "ValueError: Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conv;
    if (size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field.resize(colon);
    }
    if (size_t bang = field.find('!'); bang != std::string::npos) {
      conv = field.substr(bang + 1);
      field.resize(bang);
    }
    const Value* v = nullptr;
    if (field.empty()) {
      v = auto_idx < a.pos.size() ? &a.pos[auto_idx] : nullptr;
      ++auto_idx;
    } else if (std::all_of(field.begin(), field.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
      const size_t k = std::stoul(field);
      v = k < a.pos.size() ? &a.pos[k] : nullptr;
    } else {
      v = a.kwarg(field);
    }
    if (!v) return Error(Code::invalid_argument, "IndexError: format field '" + field + "' has no argument");
    NURL_ASSIGN(std::string s, conv == "r" ? py_repr(*v) : py_str(*v));
    if (!spec.empty()) {
      char align = v->is_number() ? '>' : '<';
      char fill = ' ';
      size_t p = 0;
      if (spec.size() >= 2 && std::string_view("<>^").find(spec[1]) != std::string_view::npos) {
        fill = spec[0];
        align = spec[1];
        p = 2;
      } else if (std::string_view("<>^").find(spec[0]) != std::string_view::npos) {
        align = spec[0];
        p = 1;
      }
      size_t width = 0;
      while (p < spec.size() && std::isdigit(static_cast<unsigned char>(spec[p])))
        width = std::min<size_t>(width * 10 + static_cast<size_t>(spec[p++] - '0'), in.limits().max_output);
      const size_t len = py::length(s);
      if (len < width) {
        const size_t pad = width - len;
        const size_t left = align == '<' ? 0 : align == '>' ? pad : pad / 2;
        s = std::string(left, fill) + s + std::string(pad - left, fill);
      }
    }
    out += s;
  }
  return in.make_string(std::move(out));
}

Result<Value> str_method(Interp& in, const std::string& s, const std::string& m, Args& a) {
  if (m == "startswith" || m == "endswith") {
    const Value* p = a.get(0, "prefix");
    if (!p) return type_error(m + "() takes at least 1 argument");
    std::vector<std::string> cands;
    if (p->is_string()) {
      cands.push_back(p->str());
    } else if (p->is_list() && p->list()->tuple) {
      for (const auto& x : p->list()->items) {
        if (!x.is_string()) return type_error("tuple for " + m + " must only contain str");
        cands.push_back(x.str());
      }
    } else {
      return type_error(m + " first arg must be str or a tuple of str, not " + type_name(*p));
    }
    for (const auto& c : cands) {
      if (m == "startswith" ? s.compare(0, c.size(), c) == 0
                            : (s.size() >= c.size() && s.compare(s.size() - c.size(), c.size(), c) == 0))
        return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  if (m == "strip" || m == "lstrip" || m == "rstrip")
    return Value::string(py::strip(s, opt_str(a.get(0, "chars")), m != "rstrip", m != "lstrip"));
  if (m == "split" || m == "rsplit") {
    std::optional<std::string> sep = opt_str(a.get(0, "sep"));
    if (sep && sep->empty()) return Error(Code::invalid_argument, "ValueError: empty separator");
    const int64_t maxsplit = opt_int(a.get(1, "maxsplit"), -1);
    std::vector<std::string> parts = m == "split" ? py::split(s, sep, maxsplit) : py::rsplit(s, sep, maxsplit);
    std::vector<Value> items;
    for (auto& p : parts) items.push_back(Value::string(std::move(p)));
    return in.make_list(std::move(items));
  }
  if (m == "splitlines") {
    std::vector<Value> items;
    for (auto& p : py::splitlines(s)) items.push_back(Value::string(std::move(p)));
    return in.make_list(std::move(items));
  }
  if (m == "replace") {
    NURL_ASSIGN(std::string old, need_str(a.get(0, "old"), "replace() first"));
    NURL_ASSIGN(std::string repl, need_str(a.get(1, "new"), "replace() second"));
    if (!old.empty() && repl.size() > old.size() &&
        (s.size() / old.size()) * (repl.size() - old.size()) + s.size() > in.limits().max_output)
      return Error(Code::invalid_argument, "replace result exceeds the size limit");
    return in.make_string(py::replace(s, old, repl, opt_int(a.get(2, "count"), -1)));
  }
  if (m == "upper") return Value::string(py::upper(s));
  if (m == "lower") return Value::string(py::lower(s));
  if (m == "title") return Value::string(py::title(s));
  if (m == "capitalize") return Value::string(py::capitalize(s));
  if (m == "swapcase") {
    std::u32string u = py::decode(s);
    for (auto& c : u) c = py::is_cased_upper(c) ? py::to_lower(c) : py::to_upper(c);
    return Value::string(py::encode(u));
  }
  if (m == "find" || m == "rfind" || m == "index" || m == "rindex") {
    NURL_ASSIGN(std::string sub, need_str(a.get(0, "sub"), m.c_str()));
    const int64_t r = py::find(s, sub, m[0] == 'r');
    if (r < 0 && (m == "index" || m == "rindex")) return Error(Code::invalid_argument, "ValueError: substring not found");
    return Value::integer(r);
  }
  if (m == "count") {
    NURL_ASSIGN(std::string sub, need_str(a.get(0, "sub"), "count()"));
    return Value::integer(py::count(s, sub));
  }
  if (m == "join") {
    const Value* it = a.get(0, "iterable");
    if (!it) return type_error("join() takes exactly one argument");
    NURL_ASSIGN(std::vector<Value> items, in.iterate(*it));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string())
        return type_error("sequence item " + std::to_string(i) + ": expected str instance, " + type_name(items[i]) + " found");
      if (i) out += s;
      out += items[i].str();
      if (out.size() > in.limits().max_output) return Error(Code::invalid_argument, "join result exceeds the size limit");
    }
    return Value::string(std::move(out));
  }
  if (m == "format") return str_format(in, s, a);
  if (m == "isdigit" || m == "isnumeric" || m == "isdecimal" || m == "isalpha" || m == "isalnum" || m == "isspace") {
    std::u32string u = py::decode(s);
    if (u.empty()) return Value::boolean(false);
    for (char32_t c : u) {
      bool okc = m == "isalpha"   ? py::is_alpha(c)
                 : m == "isalnum" ? (py::is_alpha(c) || py::is_digit(c))
                 : m == "isspace" ? py::is_space(c)
                                  : py::is_digit(c);
      if (!okc) return Value::boolean(false);
    }
    return Value::boolean(true);
  }
  if (m == "isupper" || m == "islower") {
    bool cased = false;
    for (char32_t c : py::decode(s)) {
      if (m == "isupper" ? py::is_cased_lower(c) : py::is_cased_upper(c)) return Value::boolean(false);
      cased = cased || py::is_cased_upper(c) || py::is_cased_lower(c);
    }
    return Value::boolean(cased);
  }
  if (m == "zfill" || m == "center" || m == "ljust" || m == "rjust") {
    const int64_t width = std::min<int64_t>(opt_int(a.get(0, "width"), 0), static_cast<int64_t>(in.limits().max_output));
    const int64_t len = static_cast<int64_t>(py::length(s));
    if (width <= len) return Value::string(s);
    const size_t pad = static_cast<size_t>(width - len);
    std::string fill = " ";
    if (const Value* f = a.get(1, "fillchar"); f && f->is_string() && py::length(f->str()) == 1) fill = f->str();
    auto rep = [&](size_t n) {
      std::string r;
      for (size_t i = 0; i < n; ++i) r += fill;
      return r;
    };
    if (m == "zfill") {
      const bool sign = !s.empty() && (s[0] == '-' || s[0] == '+');
      return Value::string(sign ? s.substr(0, 1) + std::string(pad, '0') + s.substr(1) : std::string(pad, '0') + s);
    }
    if (m == "ljust") return Value::string(s + rep(pad));
    if (m == "rjust") return Value::string(rep(pad) + s);
    const size_t left = pad / 2 + (pad & static_cast<size_t>(width) & 1);
    return Value::string(rep(left) + s + rep(pad - left));
  }
  if (m == "removeprefix" || m == "removesuffix") {
    NURL_ASSIGN(std::string x, need_str(a.get(0, m == "removeprefix" ? "prefix" : "suffix"), m.c_str()));
    if (m == "removeprefix" && s.compare(0, x.size(), x) == 0) return Value::string(s.substr(x.size()));
    if (m == "removesuffix" && !x.empty() && s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0)
      return Value::string(s.substr(0, s.size() - x.size()));
    return Value::string(s);
  }
  if (m == "partition" || m == "rpartition") {
    NURL_ASSIGN(std::string sep, need_str(a.get(0, "sep"), m.c_str()));
    if (sep.empty()) return Error(Code::invalid_argument, "ValueError: empty separator");
    const size_t j = m == "partition" ? s.find(sep) : s.rfind(sep);
    if (j == std::string::npos)
      return in.make_list(m == "partition"
                              ? std::vector<Value>{Value::string(s), Value::string(""), Value::string("")}
                              : std::vector<Value>{Value::string(""), Value::string(""), Value::string(s)},
                          true);
    return in.make_list({Value::string(s.substr(0, j)), Value::string(sep), Value::string(s.substr(j + sep.size()))}, true);
  }
  return type_error("'str' object has no attribute '" + m + "'");
}

Result<int64_t> list_index(const Value* v, size_t n, bool insert) {
  if (!v || !v->is_int_like()) return type_error("list index must be an integer");
  int64_t i = v->as_int();
  const int64_t len = static_cast<int64_t>(n);
  if (i < 0) i += len;
  if (insert) return std::clamp<int64_t>(i, 0, len);
  if (i < 0 || i >= len) return Error(Code::invalid_argument, "IndexError: pop index out of range");
  return i;
}

Result<Value> list_method(Interp& in, ListObj& l, const Value& self, const std::string& m, Args& a) {
  const bool mutating = m == "append" || m == "pop" || m == "insert" || m == "extend" || m == "remove" ||
                        m == "clear" || m == "reverse" || m == "sort";
  if (mutating && l.tuple) return type_error("'tuple' object has no attribute '" + m + "'");
  if (m == "append") {
    const Value* x = a.get(0, "object");
    if (!x) return type_error("append() takes exactly one argument");
    NURL_TRY(in.heap().charge(value_cost(*x)));
    l.items.push_back(*x);
    return Value::none();
  }
  if (m == "pop") {
    if (l.items.empty()) return Error(Code::invalid_argument, "IndexError: pop from empty list");
    int64_t i = static_cast<int64_t>(l.items.size()) - 1;
    if (const Value* idx = a.get(0, "index")) {
      NURL_ASSIGN(i, list_index(idx, l.items.size(), false));
    }
    Value r = l.items[static_cast<size_t>(i)];
    l.items.erase(l.items.begin() + i);
    return r;
  }
  if (m == "insert") {
    NURL_ASSIGN(int64_t i, list_index(a.get(0, "index"), l.items.size(), true));
    const Value* x = a.get(1, "object");
    if (!x) return type_error("insert expected 2 arguments");
    NURL_TRY(in.heap().charge(value_cost(*x)));
    l.items.insert(l.items.begin() + i, *x);
    return Value::none();
  }
  if (m == "extend") {
    const Value* x = a.get(0, "iterable");
    if (!x) return type_error("extend() takes exactly one argument");
    NURL_ASSIGN(std::vector<Value> items, in.iterate(*x));
    for (const auto& v : items) NURL_TRY(in.heap().charge(value_cost(v)));
    l.items.insert(l.items.end(), items.begin(), items.end());
    return Value::none();
  }
  if (m == "remove" || m == "index" || m == "count") {
    const Value* x = a.get(0, "value");
    if (!x) return type_error(m + "() takes exactly one argument");
    int64_t n = 0;
    for (size_t i = 0; i < l.items.size(); ++i) {
      NURL_ASSIGN(bool eq, py_eq(l.items[i], *x));
      if (!eq) continue;
      if (m == "remove") {
        l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(i));
        return Value::none();
      }
      if (m == "index") return Value::integer(static_cast<int64_t>(i));
      ++n;
    }
    if (m == "count") return Value::integer(n);
    return Error(Code::invalid_argument, "ValueError: list." + m + "(x): x not in list");
  }
  if (m == "copy") return in.make_list(l.items);
  if (m == "clear") {
    l.items.clear();
    return Value::none();
  }
  if (m == "reverse") {
    std::reverse(l.items.begin(), l.items.end());
    return Value::none();
  }
  if (m == "sort") {
    Args sa;
    sa.kw = a.kw;
    NURL_ASSIGN(Value sorted, call_filter(in, "sort", self, sa));
    l.items = sorted.list()->items;
    return Value::none();
  }
  return type_error(std::string("'") + type_name(self) + "' object has no attribute '" + m + "'");
}

Result<Value> dict_method(Interp& in, DictObj& d, const std::string& m, Args& a) {
  if (m == "get") {
    const Value* k = a.get(0, "key");
    if (!k) return type_error("get expected at least 1 argument");
    if (const Value* v = d.find(*k)) return *v;
    const Value* dflt = a.get(1, "default");
    return dflt ? *dflt : Value::none();
  }
  if (m == "items" || m == "keys" || m == "values") {
    std::vector<Value> out;
    for (const auto& [k, v] : d.entries) {
      if (m == "keys") {
        out.push_back(k);
      } else if (m == "values") {
        out.push_back(v);
      } else {
        NURL_ASSIGN(Value pair, in.make_list({k, v}, true));
        out.push_back(pair);
      }
    }
    NURL_ASSIGN(Value view, in.make_list(std::move(out)));
    view.list()->view = m == "items" ? "dict_items" : m == "keys" ? "dict_keys" : "dict_values";
    return view;
  }
  if (m == "pop") {
    const Value* k = a.get(0, "key");
    if (!k) return type_error("pop expected at least 1 argument");
    if (const Value* v = d.find(*k)) {
      Value r = *v;
      d.erase(*k);
      return r;
    }
    if (const Value* dflt = a.get(1, "default")) return *dflt;
    NURL_ASSIGN(std::string ks, py_repr(*k));
    return Error(Code::invalid_argument, "KeyError: " + ks);
  }
  if (m == "setdefault") {
    const Value* k = a.get(0, "key");
    if (!k) return type_error("setdefault expected at least 1 argument");
    if (const Value* v = d.find(*k)) return *v;
    Value dflt = a.get(1, "default") ? *a.get(1, "default") : Value::none();
    NURL_TRY(in.heap().charge(value_cost(*k) + value_cost(dflt)));
    d.set(*k, dflt);
    return dflt;
  }
  if (m == "update") {
    for (const auto& other : a.pos) {
      if (!other.is_dict()) return type_error("update() argument must be a mapping");
      for (const auto& [k, v] : other.dict()->entries) {
        NURL_TRY(in.heap().charge(value_cost(k) + value_cost(v)));
        d.set(k, v);
      }
    }
    for (const auto& [k, v] : a.kw) {
      NURL_TRY(in.heap().charge(k.size() + value_cost(v)));
      d.set(Value::string(k), v);
    }
    return Value::none();
  }
  if (m == "copy") {
    NURL_ASSIGN(DictObj * c, in.heap().new_dict());
    size_t cost = 0;
    for (const auto& [k, v] : d.entries) cost += value_cost(k) + value_cost(v);
    NURL_TRY(in.heap().charge(cost));
    *c = d;
    return Value::dict(c);
  }
  if (m == "clear") {
    d.entries.clear();
    d.str_index.clear();
    return Value::none();
  }
  return type_error("'dict' object has no attribute '" + m + "'");
}

}  // namespace

bool has_method(const Value& self, const std::string& name) {
  switch (self.kind()) {
    case Kind::string: return in_list(kStrMethods, name);
    case Kind::list: return in_list(kListMethods, name);
    case Kind::dict: return in_list(kDictMethods, name);
    default: return false;
  }
}

// markupsafe wraps these str methods: string arguments are escaped, the result stays Markup.
constexpr const char* kMarkupWrapped[] = {"capitalize", "title", "lower", "upper", "replace", "ljust", "rjust",
                                          "lstrip", "rstrip", "center", "strip", "swapcase", "zfill", nullptr};

Result<Value> call_method(Interp& in, const Value& self, const std::string& name, Args& args) {
  NURL_TRY(in.step());
  switch (self.kind()) {
    case Kind::string:
      if (self.is_markup() && in_list(kMarkupWrapped, name)) {
        for (auto& v : args.pos)
          if (v.is_string() && !v.is_markup()) v = Value::string(html_escape(v.str()));
        NURL_ASSIGN(Value r, str_method(in, self.str(), name, args));
        return r.is_string() ? Value::markup(r.str()) : r;
      }
      return str_method(in, self.str(), name, args);
    case Kind::list: return list_method(in, *self.list(), self, name, args);
    case Kind::dict: return dict_method(in, *self.dict(), name, args);
    default: return type_error(std::string("'") + type_name(self) + "' object has no attribute '" + name + "'");
  }
}

}  // namespace nurl::jinja
