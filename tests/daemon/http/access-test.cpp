// Access control in the request pipeline: bearer tokens (401 + WWW-Authenticate, scopes),
// what stays open, the Unix socket's exemption, the web chat's CSRF rule, same-origin
// requests, Retry-After on 429.
#include <gtest/gtest.h>

#include "http/pipeline.h"
#include "http/router.h"
#include "http/security.h"

namespace nurl::http {
namespace {

Router access_router() {
  Router r;
  auto ok = [](const Request& q) { return Reply(json_response(200, "{\"who\":\"" + q.token_name + "\"}")); };
  for (const char* p : {"/", "/assets/app.js", "/health", "/api/tags", "/api/version", "/v1/models", "/web/session"})
    r.add("GET", p, ok);
  for (const char* p : {"/api/chat", "/api/pull", "/api/create", "/web/chat", "/web/conversations"}) r.add("POST", p, ok);
  r.add("DELETE", "/api/delete", ok);
  r.add("DELETE", "/web/conversations/:id", ok);
  r.add("GET", "/busy", [](const Request&) { return Reply(error_response(429, "slow down")); });
  return r;
}

Policy tokens_policy() {
  Policy p;
  p.origins = cors_allowed_origins({});
  p.require_tokens = true;
  p.verify_token = [](std::string_view t) -> std::optional<TokenIdentity> {
    if (t == "chat-secret") return TokenIdentity{"phone", false};
    if (t == "admin-secret") return TokenIdentity{"owner", true};
    return std::nullopt;
  };
  return p;
}

Request make(const std::string& method, const std::string& path, const std::string& token = "") {
  Request q;
  q.method = method;
  q.path = q.target = path;
  q.headers["host"] = "box:11434";
  if (!token.empty()) q.headers["authorization"] = "Bearer " + token;
  return q;
}

Response run(Request q, const Policy& p) {
  static Router r = access_router();
  return std::get<Response>(handle_request(q, r, p));
}

std::string header(const Response& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

TEST(Access, TokensOnGuardsApiV1AndWebOnly) {
  auto p = tokens_policy();
  for (const char* path : {"/api/tags", "/api/version", "/v1/models", "/web/session"}) {
    auto r = run(make("GET", path), p);
    EXPECT_EQ(r.status, 401) << path;
    EXPECT_EQ(header(r, "WWW-Authenticate"), "Bearer realm=\"nurllama\"") << path;
  }
  for (const char* path : {"/", "/assets/app.js", "/health"}) EXPECT_EQ(run(make("GET", path), p).status, 200) << path;
  auto r = run(make("GET", "/api/tags", "chat-secret"), p);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"who\":\"phone\"}");
  // A wrong token is refused even where a missing one would not matter.
  EXPECT_EQ(run(make("GET", "/api/tags", "nope"), p).status, 401);
  auto lower = make("GET", "/api/tags");
  lower.headers["authorization"] = "bearer   chat-secret ";
  EXPECT_EQ(run(lower, p).status, 200);
  auto basic = make("GET", "/api/tags");
  basic.headers["authorization"] = "Basic Y2hhdC1zZWNyZXQ=";
  EXPECT_EQ(run(basic, p).status, 401);
}

// Anthropic's SDKs send the key as x-api-key: the same token on /v1, nowhere else.
TEST(Access, XApiKeyIsTheTokenOnV1) {
  auto p = tokens_policy();
  auto q = make("GET", "/v1/models");
  q.headers["x-api-key"] = "chat-secret";
  auto r = run(q, p);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"who\":\"phone\"}");
  q.headers["x-api-key"] = "nope";
  EXPECT_EQ(run(q, p).status, 401);
  auto native = make("GET", "/api/tags");
  native.headers["x-api-key"] = "chat-secret";
  EXPECT_EQ(run(native, p).status, 401);
}

TEST(Access, ChatScopeCannotPullCreateOrDelete) {
  auto p = tokens_policy();
  EXPECT_EQ(run(make("POST", "/api/chat", "chat-secret"), p).status, 200);
  EXPECT_EQ(run(make("GET", "/v1/models", "chat-secret"), p).status, 200);
  for (auto [m, path] : {std::pair{"POST", "/api/pull"}, {"POST", "/api/create"}, {"DELETE", "/api/delete"}}) {
    auto r = run(make(m, path, "chat-secret"), p);
    EXPECT_EQ(r.status, 403) << path;
    EXPECT_NE(r.body.find("admin"), std::string::npos) << r.body;
    EXPECT_EQ(run(make(m, path, "admin-secret"), p).status, 200) << path;
  }
}

TEST(Access, TheUnixSocketNeedsNoToken) {
  auto p = tokens_policy();
  auto q = make("POST", "/api/pull");
  q.peer.unix_socket = true;
  q.peer.trusted = true;
  EXPECT_EQ(run(q, p).status, 200);
}

TEST(Access, OpenModeIgnoresUnknownTokensButNamesKnownOnes) {
  auto p = tokens_policy();
  p.require_tokens = false;
  EXPECT_EQ(run(make("GET", "/api/tags"), p).status, 200);
  EXPECT_EQ(run(make("GET", "/api/tags", "sk-whatever-an-sdk-sends"), p).status, 200);
  EXPECT_EQ(run(make("GET", "/api/tags", "chat-secret"), p).body, "{\"who\":\"phone\"}");
}

TEST(Access, WebMutationsNeedJsonAndOurOriginOrAToken) {
  Policy p;
  p.origins = cors_allowed_origins({});
  auto q = make("POST", "/web/conversations");
  q.headers["content-type"] = "application/json";
  q.headers["origin"] = "http://box:11434";
  EXPECT_EQ(run(q, p).status, 200);
  auto plain = q;
  plain.headers["content-type"] = "text/plain";  // what a cross-site <form> can send
  EXPECT_EQ(run(plain, p).status, 403);
  auto foreign = q;
  foreign.headers["origin"] = "http://localhost:3000";  // allowed for CORS, not for the web chat
  EXPECT_EQ(run(foreign, p).status, 403);
  auto evil = q;
  evil.headers["origin"] = "https://evil.example";
  EXPECT_EQ(run(evil, p).status, 403);
  auto none = q;
  none.headers.erase("origin");
  EXPECT_EQ(run(none, p).status, 403);
  auto del = make("DELETE", "/web/conversations/abc");
  del.headers["origin"] = "http://box:11434";
  del.headers["content-type"] = "application/json; charset=utf-8";
  EXPECT_EQ(run(del, p).status, 200);
  // Reading needs neither; a bearer token replaces the origin proof.
  EXPECT_EQ(run(make("GET", "/web/session"), p).status, 200);
  p.verify_token = tokens_policy().verify_token;
  auto tok = make("POST", "/web/chat", "chat-secret");
  EXPECT_EQ(run(tok, p).status, 200);
}

TEST(Access, SameOriginNeedsNoCorsAllowList) {
  Policy p;  // an empty allow-list: a network-bound daemon reached by its LAN address
  auto q = make("POST", "/web/chat");
  q.headers["host"] = "192.168.1.5:11434";
  q.headers["origin"] = "http://192.168.1.5:11434";
  q.headers["content-type"] = "application/json";
  EXPECT_EQ(run(q, p).status, 200);
  EXPECT_TRUE(same_origin("http://Box", "box:80"));
  EXPECT_TRUE(same_origin("https://box", "box:443"));
  EXPECT_TRUE(same_origin("http://[::1]:8080", "[::1]:8080"));
  EXPECT_FALSE(same_origin("http://box:8080", "box"));
  EXPECT_FALSE(same_origin("null", "box"));
  EXPECT_FALSE(same_origin("http://box.evil", "box"));
  EXPECT_FALSE(same_origin("http://box@evil:80", "evil"));
  EXPECT_FALSE(same_origin("http://box", ""));
}

TEST(Access, TooManyRequestsCarriesRetryAfter) {
  Policy p;
  auto r = run(make("GET", "/busy"), p);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(header(r, "Retry-After"), "1");
}

}  // namespace
}  // namespace nurl::http
