#include "routes/basic.h"

#include <nlohmann/json.hpp>

#include "api/version.h"
#include "core/json-text.h"
#include "routes/web.h"

namespace nurl {

void add_basic_routes(http::Router& r, RouteContext&) {
  r.add("GET", "/", [](const http::Request& req) {
    if (browser_wants_page(req)) return web_index(req);  // the web chat (routes/web-page.cpp)
    http::Response res;
    res.content_type = "text/plain; charset=utf-8";
    res.body = "nurllama is running";
    return http::Reply(res);
  });
  r.add("GET", "/api/version", [](const http::Request&) {
    return http::Reply(http::json_response(200, dump_json(nlohmann::json{{"version", version_string()}})));
  });
}

}  // namespace nurl
