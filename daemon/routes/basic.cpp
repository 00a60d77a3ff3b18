#include "routes/basic.h"

#include <nlohmann/json.hpp>

#include "api/version.h"

namespace nurl {

void add_basic_routes(http::Router& r, RouteContext&) {
  r.add("GET", "/", [](const http::Request&) {
    http::Response res;
    res.content_type = "text/plain; charset=utf-8";
    res.body = "nurllama is running";
    return http::Reply(res);
  });
  r.add("GET", "/api/version", [](const http::Request&) {
    return http::Reply(http::json_response(200, nlohmann::json{{"version", version_string()}}.dump()));
  });
}

}  // namespace nurl
