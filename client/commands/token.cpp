// `nurllama token create NAME [--scope chat|admin]`, `token list`, `token revoke NAME`: bearer
// tokens for a daemon with access "tokens", managed over the control socket only.
#include "client/context.h"
#include "client/format.h"

namespace nurl::client {

void add_token_commands(CLI::App& app, Context& ctx) {
  auto* token = app.add_subcommand("token", "Create, list and revoke access tokens (over the control socket)");
  token->require_subcommand(1);

  auto name = std::make_shared<std::string>();
  auto scope = std::make_shared<std::string>("chat");
  auto* create = token->add_subcommand("create", "Create a token; it is shown once");
  create->add_option("name", *name, "A name for the token (letters, digits, . _ -)")->required();
  create->add_option("--scope", *scope, "chat (web chat and inference) or admin (also pulls, deletes, creates)")
      ->check(CLI::IsMember({"chat", "admin"}));
  create->callback([&ctx, name, scope] {
    auto j = ctx.call("POST", "/control/tokens", nlohmann::json{{"name", *name}, {"scope", *scope}});
    if (j.is_null()) return;
    std::printf("Token \"%s\" (scope %s). It is shown only this once; keep it somewhere safe:\n\n  %s\n\n",
                j.value("name", "").c_str(), j.value("scope", "").c_str(), j.value("token", "").c_str());
    std::printf("Use it as: Authorization: Bearer <token>  (the web page asks for it once)\n");
  });

  token->add_subcommand("list", "List tokens (names and scopes; secrets are never stored)")->callback([&ctx] {
    auto j = ctx.call("GET", "/control/tokens");
    if (j.is_null()) return;
    std::vector<std::vector<std::string>> rows{{"NAME", "SCOPE", "CREATED"}};
    for (const auto& t : j.value("tokens", nlohmann::json::array()))
      rows.push_back({t.value("name", ""), t.value("scope", ""), t.value("created_at", "")});
    std::fputs(render_table(rows).c_str(), stdout);
  });

  auto revoke_name = std::make_shared<std::string>();
  auto* revoke = token->add_subcommand("revoke", "Revoke a token; requests with it are refused from now on");
  revoke->add_option("name", *revoke_name, "The token's name")->required();
  revoke->callback([&ctx, revoke_name] {
    auto j = ctx.call("DELETE", "/control/tokens/" + *revoke_name);
    if (j.is_null()) return;
    std::printf("revoked %s\n", revoke_name->c_str());
  });
}

}  // namespace nurl::client
