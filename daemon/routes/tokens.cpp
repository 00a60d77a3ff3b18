#include "routes/tokens.h"

#include <nlohmann/json.hpp>

#include "auth/token-store.h"
#include "core/json-text.h"

namespace nurl {

namespace {

using Json = nlohmann::json;

http::Reply no_token_store() { return http::error_response(500, "the token store is not available (see the daemon log)"); }

}  // namespace

void add_token_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/control/tokens",
        [&ctx](const http::Request& req) -> http::Reply {
          if (!ctx.tokens) return no_token_store();
          Json j = parse_json(req.body);
          if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
            return http::error_response(400, "expected {\"name\": NAME, \"scope\": \"chat\" | \"admin\"}");
          auto scope = auth::parse_scope(j.value("scope", "chat"));
          if (!scope.ok()) return http::error_response(scope.error());
          const std::string name = j["name"].get<std::string>();
          auto secret = ctx.tokens->create(name, *scope);
          if (!secret.ok()) return http::error_response(secret.error());
          ctx.log.info("control: token \"" + name + "\" (" + auth::scope_name(*scope) + ") created by " + req.peer.address);
          return http::json_response(201, dump_json(Json{{"name", name}, {"scope", auth::scope_name(*scope)}, {"token", *secret}}));
        },
        http::Access::control);
  r.add("GET", "/control/tokens",
        [&ctx](const http::Request&) -> http::Reply {
          if (!ctx.tokens) return no_token_store();
          Json arr = Json::array();
          for (const auto& t : ctx.tokens->list())
            arr.push_back({{"name", t.name}, {"scope", auth::scope_name(t.scope)}, {"created_at", t.created_at}});
          return http::json_response(200, dump_json(Json{{"tokens", arr}}));
        },
        http::Access::control);
  r.add("DELETE", "/control/tokens/:name",
        [&ctx](const http::Request& req) -> http::Reply {
          if (!ctx.tokens) return no_token_store();
          const std::string& name = req.params.at("name");
          auto res = ctx.tokens->revoke(name);
          if (!res.ok()) return http::error_response(res.error());
          ctx.log.info("control: token \"" + name + "\" revoked by " + req.peer.address);
          return http::json_response(200, dump_json(Json{{"revoked", name}}));
        },
        http::Access::control);
}

}  // namespace nurl
