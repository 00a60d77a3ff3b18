#include "routes/control.h"

#include <nlohmann/json.hpp>

#include "api/ollama.h"
#include "core/json-text.h"
#include "scheduler/scheduler.h"

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
          // Which wizard file the new config came from, so `nurllama start` can tell it was read.
          return http::Reply(http::json_response(
              200, dump_json(nlohmann::json{{"status", "reloaded"}, {"config_json", ctx.config.get()->wizard_file}})));
        },
        http::Access::control);
  // {"model": NAME} → unloads it as soon as it is idle (running requests finish first).
  r.add("POST", "/control/unload",
        [&ctx](const http::Request& req) {
          auto name = api::parse_model_field(req.body);
          if (!name.ok()) return http::Reply(http::error_response(name.error()));
          auto cfg = ctx.config.get();
          auto m = resolve_model(*name, req.peer, cfg->allow_model_paths, ctx.store_resolve);
          if (!m.ok()) return http::Reply(http::error_response(m.error()));
          bool was_loaded = ctx.scheduler && ctx.scheduler->unload(m->path);
          return http::Reply(http::json_response(200, dump_json(nlohmann::json{{"model", *name}, {"unloaded", was_loaded}})));
        },
        http::Access::control);
}

}  // namespace nurl
