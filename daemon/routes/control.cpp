#include "routes/control.h"

#include <nlohmann/json.hpp>

namespace nurl {

void add_control_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/control/shutdown",
        [&ctx](const http::Request& req) {
          ctx.log.info("control: shutdown requested by " + req.peer.address);
          if (ctx.request_shutdown) ctx.request_shutdown();
          return http::Reply(http::json_response(200, R"({"status":"shutting down"})"));
        },
        http::Access::control);
  r.add("POST", "/control/reload",
        [&ctx](const http::Request& req) {
          ctx.log.info("control: config reload requested by " + req.peer.address);
          if (!ctx.reload_config) return http::Reply(http::error_response(500, "reload is not available"));
          auto res = ctx.reload_config();
          if (!res.ok()) return http::Reply(http::error_response(res.error()));
          return http::Reply(http::json_response(200, R"({"status":"reloaded"})"));
        },
        http::Access::control);
}

}  // namespace nurl
