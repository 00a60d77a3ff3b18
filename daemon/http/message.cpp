#include "http/message.h"

#include <nlohmann/json.hpp>

#include "core/json-text.h"

namespace nurl::http {

const std::string& Request::header(const std::string& name) const {
  static const std::string kEmpty;
  auto it = headers.find(name);
  return it == headers.end() ? kEmpty : it->second;
}

Response json_response(int status, const std::string& json_text) {
  Response r;
  r.status = status;
  r.body = json_text;
  return r;
}

Response error_response(int status, const std::string& message) {
  nlohmann::json j = {{"error", message}};
  return json_response(status, dump_json(j, -1, InvalidUtf8::replace));
}

Response error_response(const Error& e) { return error_response(http_status(e.code), e.msg); }

std::string ndjson_error_line(const Error& e) {
  nlohmann::json j = {{"error", e.msg}};
  return dump_json(j, -1, InvalidUtf8::replace) + "\n";
}

}  // namespace nurl::http
