// Python's binary operators and `in` over jinja::Value: int arithmetic is exact (overflow is an
// error, Python would switch to big integers), `/` is true division, `//` and `%` floor, strings
// and lists concatenate and repeat within the size limits, `%` on a string is printf-style.
#include <cmath>
#include <cstdio>
#include <limits>

#include "engine/chat/jinja-interp.h"
#include "engine/chat/py-string.h"

namespace nurl::jinja {

namespace {

Error overflow() { return Error(Code::invalid_argument, "integer overflow (values beyond 64 bits are not supported)"); }

Error unsupported(const std::string& op, const Value& a, const Value& b) {
  return type_error("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

Result<Value> repeat(Interp& in, const Value& seq, int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const size_t len = seq.str().size();
    if (len != 0 && static_cast<uint64_t>(n) > in.limits().max_output / len)
      return Error(Code::invalid_argument, "string repetition exceeds the size limit");
    std::string out;
    out.reserve(len * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += seq.str();
    return Value::string(std::move(out));
  }
  const auto& items = seq.list()->items;
  if (!items.empty() && static_cast<uint64_t>(n) > in.limits().max_heap / (items.size() * sizeof(Value)))
    return Error(Code::invalid_argument, "list repetition exceeds the memory budget");
  std::vector<Value> out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return in.make_list(std::move(out), seq.list()->tuple);
}

Result<Value> int_pow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1)
      if (__builtin_mul_overflow(result, base, &result)) return overflow();
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) return overflow();
  }
  return Value::integer(result);
}

// printf-style `fmt % args` for the conversions templates use: s r d i f F e g x X o c %.
Result<Value> percent_format(Interp& in, const std::string& fmt, const Value& arg) {
  std::vector<Value> args;
  if (arg.is_list() && arg.list()->tuple)
    args = arg.list()->items;
  else
    args.push_back(arg);
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    size_t j = i + 1;
    std::string spec = "%";
    while (j < fmt.size() && std::string_view("-+ #0").find(fmt[j]) != std::string_view::npos) spec += fmt[j++];
    while (j < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[j]))) spec += fmt[j++];
    if (j < fmt.size() && fmt[j] == '.') {
      spec += fmt[j++];
      while (j < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[j]))) spec += fmt[j++];
    }
    if (j >= fmt.size()) return Error(Code::invalid_argument, "ValueError: incomplete format");
    const char conv = fmt[j];
    i = j;
    if (conv == '%') {
      out += '%';
      continue;
    }
    if (next >= args.size()) return type_error("not enough arguments for format string");
    const Value& v = args[next++];
    char buf[512];
    if (conv == 's' || conv == 'r') {
      NURL_ASSIGN(std::string s, conv == 's' ? py_str(v) : py_repr(v));
      // Width (and '-' for left alignment) by hand: snprintf would cut long strings.
      size_t width = 0;
      for (char ch : spec)
        if (std::isdigit(static_cast<unsigned char>(ch)) && spec.find('.') == std::string::npos) width = width * 10 + static_cast<size_t>(ch - '0');
      const size_t len = py::length(s);
      const std::string pad = len < width ? std::string(width - len, ' ') : "";
      out += spec.find('-') != std::string::npos ? s + pad : pad + s;
      continue;
    }
    if (!v.is_number()) return type_error(std::string("%") + conv + " format: a real number is required, not " + type_name(v));
    if (conv == 'd' || conv == 'i' || conv == 'x' || conv == 'X' || conv == 'o' || conv == 'c') {
      const long long n = v.is_int_like() ? v.as_int() : static_cast<long long>(v.as_float());
      if (conv == 'c') {
        std::string c;
        c += static_cast<char>(n);
        out += c;
        continue;
      }
      std::snprintf(buf, sizeof buf, (spec + "ll" + (conv == 'i' ? 'd' : conv)).c_str(), n);
    } else if (std::string_view("fFeEgG").find(conv) != std::string_view::npos) {
      std::snprintf(buf, sizeof buf, (spec + conv).c_str(), v.as_float());
    } else {
      return Error(Code::invalid_argument, std::string("ValueError: unsupported format character '") + conv + "'");
    }
    out += buf;
  }
  // Python treats a dict or list operand as a mapping: leftovers are not an error then.
  const bool mapping = arg.is_dict() || (arg.is_list() && !arg.list()->tuple);
  if (next < args.size() && !mapping) return type_error("not all arguments converted during string formatting");
  return in.make_string(std::move(out));
}

}  // namespace

Result<Value> binary_op(Interp& in, const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    NURL_ASSIGN(std::string x, py_str(a));
    NURL_ASSIGN(std::string y, py_str(b));
    return in.make_string(x + y);
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);

  const bool ints = a.is_int_like() && b.is_int_like();
  const bool nums = a.is_number() && b.is_number();
  if (op == "+") {
    if (ints) {
      int64_t r;
      if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) return overflow();
      return Value::integer(r);
    }
    if (nums) return Value::floating(a.as_float() + b.as_float());
    if (a.is_markup() || b.is_markup()) {
      if (a.is_string() && b.is_string()) {  // Markup + str escapes the plain side
        std::string s = (a.is_markup() ? a.str() : html_escape(a.str())) + (b.is_markup() ? b.str() : html_escape(b.str()));
        if (s.size() > in.limits().max_output) return in.make_string(std::move(s));
        return Value::markup(std::move(s));
      }
      return unsupported("+", a, b);
    }
    if (a.is_string() && b.is_string()) return in.make_string(a.str() + b.str());
    if (a.is_list() && b.is_list() && a.list()->tuple == b.list()->tuple) {
      std::vector<Value> items = a.list()->items;
      items.insert(items.end(), b.list()->items.begin(), b.list()->items.end());
      return in.make_list(std::move(items), a.list()->tuple);
    }
    if (a.is_string()) return type_error(std::string("can only concatenate str (not \"") + type_name(b) + "\") to str");
    if (a.is_list())
      return type_error(std::string("can only concatenate ") + type_name(a) + " (not \"" + type_name(b) + "\") to " +
                        type_name(a));
    return unsupported("+", a, b);
  }
  if (op == "-") {
    if (ints) {
      int64_t r;
      if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r)) return overflow();
      return Value::integer(r);
    }
    if (nums) return Value::floating(a.as_float() - b.as_float());
    return unsupported("-", a, b);
  }
  if (op == "*") {
    if (ints) {
      int64_t r;
      if (__builtin_mul_overflow(a.as_int(), b.as_int(), &r)) return overflow();
      return Value::integer(r);
    }
    if (nums) return Value::floating(a.as_float() * b.as_float());
    if ((a.is_string() || a.is_list()) && b.is_int_like()) return repeat(in, a, b.as_int());
    if ((b.is_string() || b.is_list()) && a.is_int_like()) return repeat(in, b, a.as_int());
    return unsupported("*", a, b);
  }
  if (op == "/") {
    if (!nums) return unsupported("/", a, b);
    if (b.as_float() == 0.0) return Error(Code::invalid_argument, "ZeroDivisionError: division by zero");
    return Value::floating(a.as_float() / b.as_float());
  }
  if (op == "//" || op == "%") {
    if (op == "%" && a.is_string()) return percent_format(in, a.str(), b);
    if (!nums) return unsupported(op, a, b);
    if (ints) {
      const int64_t x = a.as_int(), y = b.as_int();
      if (y == 0) return Error(Code::invalid_argument, "ZeroDivisionError: integer division or modulo by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) return overflow();
      int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {
        q -= 1;
        r += y;
      }
      return Value::integer(op == "//" ? q : r);
    }
    const double x = a.as_float(), y = b.as_float();
    if (y == 0.0) return Error(Code::invalid_argument, "ZeroDivisionError: float modulo");
    double r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    if (op == "%") return Value::floating(r == 0 ? std::copysign(0.0, y) : r);
    return Value::floating(std::floor((x - r) / y + 0.5));  // (x - r) / y is integral up to rounding
  }
  if (op == "**") {
    if (ints && b.as_int() >= 0) return int_pow(a.as_int(), b.as_int());
    if (!nums) return unsupported("** or pow()", a, b);
    if (a.as_float() == 0.0 && b.as_float() < 0)
      return Error(Code::invalid_argument, "ZeroDivisionError: 0.0 cannot be raised to a negative power");
    const double r = std::pow(a.as_float(), b.as_float());
    if (std::isnan(r) && !std::isnan(a.as_float()) && !std::isnan(b.as_float()))
      return Error(Code::invalid_argument, "ValueError: negative number cannot be raised to a fractional power");
    return Value::floating(r);
  }
  return Error(Code::internal, "unknown operator " + op);
}

Result<bool> contains(const Value& c, const Value& item) {
  switch (c.kind()) {
    case Kind::undefined: return false;  // Undefined iterates as empty
    case Kind::string:
      if (!item.is_string())
        return type_error(std::string("'in <string>' requires string as left operand, not ") + type_name(item));
      return c.str().find(item.str()) != std::string::npos;
    case Kind::list:
      for (const auto& x : c.list()->items) {
        NURL_ASSIGN(bool eq, py_eq(x, item));
        if (eq) return true;
      }
      return false;
    case Kind::dict:
    case Kind::ns: return c.dict()->find(item) != nullptr;
    default: return type_error(std::string("argument of type '") + type_name(c) + "' is not iterable");
  }
}

}  // namespace nurl::jinja
