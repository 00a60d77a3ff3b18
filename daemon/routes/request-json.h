// Small JSON helpers the model-management routes share (models.cpp, create.cpp, jobs.cpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/json-fields.h"
#include "core/error.h"
#include "core/json-text.h"
#include "http/message.h"

namespace nurl::routes {

using Json = nlohmann::json;

using api::dump;

inline Result<Json> body_json(const http::Request& req) {
  auto j = parse_json(req.body);
  if (j.is_discarded() || !j.is_object()) return Error(Code::invalid_argument, "request body must be a JSON object");
  return j;
}

// The string field `k`, or "" when absent or not a string.
inline std::string str(const Json& j, const char* k) { return jf::str(j, k); }

// ollama accepts "model" and the older "name".
inline std::string model_field(const Json& j) {
  std::string m = str(j, "model");
  return m.empty() ? str(j, "name") : m;
}

// A server-side path (as opposed to a model name or a URL).
inline bool is_server_path(const std::string& s) {
  return s.rfind("/", 0) == 0 || s.rfind("./", 0) == 0 || s.rfind("../", 0) == 0 || s.rfind("~/", 0) == 0;
}

inline Error no_store() { return Error(Code::busy, "the model store is not available (see the daemon log)"); }

}  // namespace nurl::routes
