#include "api/json-fields.h"

#include <cctype>
#include <cmath>

#include "core/json-text.h"

namespace nurl::api {

Error bad_field(const std::string& field, const char* want) {
  return Error(Code::invalid_argument, "invalid value for \"" + field + "\": expected " + want);
}

Result<Json> parse_body(std::string_view body) {
  bool blank = true;
  for (char c : body)
    if (!std::isspace(static_cast<unsigned char>(c))) {
      blank = false;
      break;
    }
  if (blank) return Error(Code::invalid_argument, "missing request body");
  Json j = parse_json(body);
  if (j.is_discarded()) return Error(Code::invalid_argument, "invalid JSON in request body");
  if (!j.is_object()) return Error(Code::invalid_argument, "request body must be a JSON object");
  return j;
}

OrderedJson parse_ordered(std::string_view body) { return parse_ordered_json(body); }

template <class J>
const J* field(const J& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

template <class J>
Result<void> get_string(const J& j, const char* key, std::string* out) {
  const J* v = field(j, key);
  if (!v) return ok();
  if (!v->is_string()) return bad_field(key, "a string");
  *out = v->template get<std::string>();
  return ok();
}

template <class J>
std::string string_or(const J& j, const char* key, const std::string& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->template get<std::string>() : fallback;
}

template <class J>
Result<void> get_bool(const J& j, const char* key, bool* out) {
  const J* v = field(j, key);
  if (!v) return ok();
  if (!v->is_boolean()) return bad_field(key, "true or false");
  *out = v->template get<bool>();
  return ok();
}

#define NURL_READERS_(J)                                                              \
  template const J* field<J>(const J&, const char*);                                 \
  template Result<void> get_string<J>(const J&, const char*, std::string*);          \
  template std::string string_or<J>(const J&, const char*, const std::string&);      \
  template Result<void> get_bool<J>(const J&, const char*, bool*);
NURL_READERS_(Json)
NURL_READERS_(OrderedJson)
#undef NURL_READERS_

namespace {

std::string range_text(double lo, double hi) {
  auto num = [](double x) {
    if (std::floor(x) == x && std::fabs(x) < 1e15) return std::to_string(static_cast<int64_t>(x));
    std::string s = std::to_string(x);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    return s;
  };
  return "[" + num(lo) + ", " + num(hi) + "]";
}

}  // namespace

Result<void> get_number(const Json& j, const char* key, double lo, double hi, std::optional<double>* out) {
  const Json* v = field(j, key);
  if (!v) return ok();
  if (!v->is_number()) return bad_field(key, "a number");
  double x = v->get<double>();
  if (!(x >= lo && x <= hi))
    return Error(Code::invalid_argument, "\"" + std::string(key) + "\" must be in " + range_text(lo, hi));
  *out = x;
  return ok();
}

Result<void> get_integer(const Json& j, const char* key, int64_t lo, int64_t hi, std::optional<int64_t>* out) {
  const Json* v = field(j, key);
  if (!v) return ok();
  NURL_ASSIGN(int64_t x, as_integer(*v, "\"" + std::string(key) + "\""));
  if (x < lo || x > hi)
    return Error(Code::invalid_argument, "\"" + std::string(key) + "\" must be in " +
                                             range_text(static_cast<double>(lo), static_cast<double>(hi)));
  *out = x;
  return ok();
}

Result<void> get_strings(const Json& j, const char* key, bool one_string_ok,
                         std::optional<std::vector<std::string>>* out) {
  const Json* v = field(j, key);
  if (!v) return ok();
  const char* want = one_string_ok ? "a string or an array of strings" : "an array of strings";
  std::vector<std::string> list;
  if (v->is_string() && one_string_ok) {
    list.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    for (const auto& x : *v) {
      if (!x.is_string()) return bad_field(key, want);
      list.push_back(x.get<std::string>());
    }
  } else {
    return bad_field(key, want);
  }
  *out = std::move(list);
  return ok();
}

Result<int64_t> as_integer(const Json& v, const std::string& what) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
  }
  return Error(Code::invalid_argument, what + " must be an integer, got " + std::string(v.type_name()));
}

Result<double> as_number(const Json& v, const std::string& what) {
  if (v.is_number()) return v.get<double>();
  return Error(Code::invalid_argument, what + " must be a number, got " + std::string(v.type_name()));
}

std::string dump(const Json& j) { return dump_json(j, -1, InvalidUtf8::replace); }
std::string dump(const OrderedJson& j) { return dump_json(j, -1, InvalidUtf8::replace); }

}  // namespace nurl::api
