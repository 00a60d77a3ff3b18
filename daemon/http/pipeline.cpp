#include "http/pipeline.h"

#include <algorithm>
#include <cctype>

#include "http/security.h"

namespace nurl::http {

namespace {

void add_headers(Reply& reply, const std::vector<std::pair<std::string, std::string>>& hs) {
  std::visit([&](auto& r) { r.headers.insert(r.headers.end(), hs.begin(), hs.end()); }, reply);
}

bool starts_with(const std::string& s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }

bool token_protected(const std::string& path) {
  return starts_with(path, "/api/") || starts_with(path, "/v1/") || starts_with(path, "/web/") || path == "/api" ||
         path == "/v1" || path == "/web";
}

// "Bearer <token>" (scheme case-insensitive) → the token; "" when absent or another scheme.
std::string bearer_token(const std::string& authorization) {
  if (authorization.size() < 7) return "";
  std::string scheme = authorization.substr(0, 7);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  if (scheme != "bearer ") return "";
  std::string t = authorization.substr(7);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.erase(t.begin());
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  return t;
}

Response unauthorized(const std::string& why) {
  Response r = error_response(401, why);
  r.headers.push_back({"WWW-Authenticate", "Bearer realm=\"nurllama\""});
  return r;
}

bool is_json_content(const std::string& content_type) {
  std::string ct = content_type.substr(0, content_type.find(';'));
  std::transform(ct.begin(), ct.end(), ct.begin(), [](unsigned char c) { return std::tolower(c); });
  while (!ct.empty() && std::isspace(static_cast<unsigned char>(ct.back()))) ct.pop_back();
  return ct == "application/json";
}

}  // namespace

bool chat_scope_allows(const std::string& method, const std::string& path) {
  if (starts_with(path, "/web/") || starts_with(path, "/v1/")) return true;
  const std::string m = method == "HEAD" ? "GET" : method;
  static const std::vector<std::pair<const char*, const char*>> allowed = {
      {"GET", "/api/tags"},         {"GET", "/api/ps"},          {"GET", "/api/version"},
      {"POST", "/api/show"},        {"POST", "/api/generate"},   {"POST", "/api/chat"},
      {"POST", "/api/embed"},       {"POST", "/api/embeddings"}, {"POST", "/api/tokenize"},
      {"POST", "/api/detokenize"},  {"POST", "/api/vocab"},      {"POST", "/api/logits"},
  };
  for (const auto& [am, ap] : allowed)
    if (m == am && path == ap) return true;
  return false;
}

Reply handle_request(Request& req, const Router& router, const Policy& policy) {
  if (req.peer.unix_socket && !req.peer.trusted)
    return error_response(403, "peer uid " + std::to_string(req.peer.uid) +
                                   " may not use this socket (same user, root or the service group only)");
  if (!req.peer.unix_socket && policy.check_host &&
      !host_header_allowed(req.header("host"), policy.machine_hostname)) {
    return error_response(403, "host \"" + req.header("host") + "\" is not allowed");
  }

  // Bearer tokens. In open mode a token that does not verify is ignored (clients such as the
  // OpenAI and Anthropic SDKs always send one); with tokens on it is refused.
  const bool tcp = !req.peer.unix_socket;
  const bool tokens_on = tcp && policy.require_tokens;
  req.token_name.clear();
  req.token_admin = false;
  // Anthropic's SDKs send the key as x-api-key instead of Authorization: the same token.
  std::string tok = bearer_token(req.header("authorization"));
  if (tok.empty() && req.path.starts_with("/v1/")) tok = req.header("x-api-key");
  if (!tok.empty() && policy.verify_token) {
    if (auto id = policy.verify_token(tok)) {
      req.token_name = id->name;
      req.token_admin = id->admin;
    } else if (tokens_on && token_protected(req.path) && req.method != "OPTIONS") {
      return unauthorized("the bearer token is not valid (unknown or revoked)");
    }
  }
  const bool has_token = !req.token_name.empty();

  std::vector<std::pair<std::string, std::string>> cors;
  const std::string& origin = req.header("origin");
  const bool own_origin = !origin.empty() && same_origin(origin, req.header("host"));
  if (!origin.empty() && !own_origin) {
    if (!origin_allowed(origin, policy.origins))
      return error_response(403, "origin \"" + origin + "\" is not allowed (see NURLLAMA_ORIGINS)");
    cors = {{"Access-Control-Allow-Origin", origin}, {"Vary", "Origin"}};
    if (req.method == "OPTIONS") {
      Response pre;
      pre.status = 204;
      pre.content_type.clear();
      pre.headers = cors;
      pre.headers.push_back({"Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"});
      pre.headers.push_back({"Access-Control-Allow-Headers",
                             "Authorization, Content-Type, User-Agent, Accept, X-Requested-With, "
                             "X-Stainless-Lang, X-Stainless-Package-Version, X-Stainless-OS, "
                             "X-Stainless-Arch, X-Stainless-Runtime, X-Stainless-Runtime-Version, "
                             "X-Stainless-Retry-Count, X-Stainless-Timeout"});
      pre.headers.push_back({"Access-Control-Max-Age", "43200"});
      return pre;
    }
  }
  if (req.method == "OPTIONS") {
    Response r;
    r.status = router.has_path(req.path) ? 204 : 404;
    r.content_type.clear();
    return r;
  }

  if (tokens_on && token_protected(req.path)) {
    if (!has_token) return unauthorized("this server needs a token: send Authorization: Bearer <token>");
    if (!req.token_admin && !chat_scope_allows(req.method, req.path))
      return error_response(403, "token \"" + req.token_name + "\" has the chat scope; " + req.method + " " +
                                     req.path + " needs an admin token");
  }

  // The web chat's cookie is ambient authority: a mutation must prove it comes from the page
  // itself (JSON, which a cross-site form cannot send, and our own Origin) or carry a token.
  const bool mutation = req.method != "GET" && req.method != "HEAD";
  if (tcp && mutation && starts_with(req.path, "/web/") && !has_token) {
    if (!is_json_content(req.header("content-type")))
      return error_response(403, "web requests that change state must be application/json");
    if (!own_origin) return error_response(403, "web requests that change state must come from this server's page");
  }

  Reply reply = router.dispatch(req);
  if (!cors.empty()) add_headers(reply, cors);
  if (auto* r = std::get_if<Response>(&reply); r && r->status == 429) {
    bool has = std::any_of(r->headers.begin(), r->headers.end(), [](const auto& h) {
      std::string k = h.first;
      std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
      return k == "retry-after";
    });
    if (!has) r->headers.push_back({"Retry-After", "1"});
  }
  return reply;
}

}  // namespace nurl::http
