// Typed reads of untrusted JSON (requests, job state files, a server's listings): a missing or
// mistyped field gives the default, where nlohmann's value() would throw type_error.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

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
