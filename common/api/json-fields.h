// Reading fields from JSON, two ways:
// - nurl::api: request fields, shared by every wire format (ollama, OpenAI, Anthropic): strict
//   about types (a string where a number belongs is an Error naming the field); absent and null
//   fields leave the output untouched. Errors are Code::invalid_argument.
// - nurl::jf: lenient typed reads of untrusted JSON where a default is the right answer (job
//   state files, a server's listings, optional request knobs): a missing or mistyped field gives
//   the default, where nlohmann's value() would throw type_error.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nurl::api {

using Json = nlohmann::json;
// The same JSON with its objects' key order kept. Request fields whose order carries meaning are
// read from it: a JSON schema's properties are generated in the order they are declared, and the
// chat template renders tools as the client wrote them.
using OrderedJson = nlohmann::ordered_json;

// "invalid value for \"field\": expected <want>"
Error bad_field(const std::string& field, const char* want);

// The request body as a JSON object: empty → "missing request body"; not JSON → "invalid JSON
// in request body"; not an object → "request body must be a JSON object".
Result<Json> parse_body(std::string_view body);
// A body that parse_body accepted, parsed again with its key order kept (for the fields above).
OrderedJson parse_ordered(std::string_view body);

// These four read either parse of a body (J: Json or OrderedJson).
// The member or nullptr when absent or null.
template <class J>
const J* field(const J& j, const char* key);
template <class J>
Result<void> get_string(const J& j, const char* key, std::string* out);
// The member when j is an object and the member a string, else `fallback` (never throws).
template <class J>
std::string string_or(const J& j, const char* key, const std::string& fallback = "");
template <class J>
Result<void> get_bool(const J& j, const char* key, bool* out);
// A number in [lo, hi]; `out` stays unset when the field is absent.
Result<void> get_number(const Json& j, const char* key, double lo, double hi, std::optional<double>* out);
// An integer (5.0 counts) in [lo, hi].
Result<void> get_integer(const Json& j, const char* key, int64_t lo, int64_t hi, std::optional<int64_t>* out);

// An array of strings (or, with one_string_ok, a single string) → `out`.
Result<void> get_strings(const Json& j, const char* key, bool one_string_ok, std::optional<std::vector<std::string>>* out);

// Integer options accept JSON numbers with an integral value (clients send 5.0 sometimes).
// `what` names the value in the error ("option \"num_ctx\"").
Result<int64_t> as_integer(const Json& v, const std::string& what);
Result<double> as_number(const Json& v, const std::string& what);

// Compact JSON text; invalid UTF-8 in strings becomes U+FFFD instead of throwing.
std::string dump(const Json& j);
std::string dump(const OrderedJson& j);

}  // namespace nurl::api

namespace nurl::jf {

inline std::string str(const nlohmann::json& j, const char* k, std::string dflt = {}) {
  if (!j.is_object()) return dflt;
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : dflt;
}

inline int64_t i64(const nlohmann::json& j, const char* k, int64_t dflt = 0) {
  if (!j.is_object()) return dflt;
  auto it = j.find(k);
  if (it == j.end()) return dflt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_unsigned() && it->get<uint64_t>() <= uint64_t(INT64_MAX)) return int64_t(it->get<uint64_t>());
  return dflt;
}

inline uint64_t u64(const nlohmann::json& j, const char* k, uint64_t dflt = 0) {
  if (!j.is_object()) return dflt;
  auto it = j.find(k);
  if (it == j.end()) return dflt;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer() && it->get<int64_t>() >= 0) return uint64_t(it->get<int64_t>());
  return dflt;
}

// An int within [lo, hi], else the default.
inline int int_in(const nlohmann::json& j, const char* k, int lo, int hi, int dflt) {
  int64_t v = i64(j, k, int64_t(dflt));
  return v < lo || v > hi ? dflt : int(v);
}

inline bool boolean(const nlohmann::json& j, const char* k, bool dflt) {
  if (!j.is_object()) return dflt;
  auto it = j.find(k);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : dflt;
}

// The object field `k`, or an empty object.
inline nlohmann::json object(const nlohmann::json& j, const char* k) {
  if (!j.is_object()) return nlohmann::json::object();
  auto it = j.find(k);
  return it != j.end() && it->is_object() ? *it : nlohmann::json::object();
}

}  // namespace nurl::jf
