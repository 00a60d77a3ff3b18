// What happens to every request between the socket and its route, socket-free so it is unit
// tested: the Host-header check (loopback listeners only), bearer tokens (access "tokens"),
// CORS (allow-list, preflight; the daemon's own origin always), the web chat's CSRF rule, then
// the router. The server calls handle_request() and only frames the Reply.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.h"
#include "http/router.h"

namespace nurl::http {

struct TokenIdentity {
  std::string name;
  bool admin = false;
};
// Looks a presented bearer token up (constant-time; see auth/token-store.h).
using TokenVerifier = std::function<std::optional<TokenIdentity>(std::string_view token)>;

struct Policy {
  bool check_host = false;           // TCP listener bound to loopback only
  std::string machine_hostname;
  std::vector<std::string> origins;  // CORS allow-list patterns (cors_allowed_origins())
  // Access "tokens": every /api/*, /v1/* and /web/* request over TCP needs a valid
  // `Authorization: Bearer` token (401 + WWW-Authenticate otherwise); `chat` tokens reach only
  // the chat and inference routes (403 otherwise). "/", the page's assets and /health stay
  // open; the Unix socket keeps its peer-credential rule and needs no token.
  bool require_tokens = false;
  TokenVerifier verify_token;        // also names the caller (Request::token_name) in open mode
};

Reply handle_request(Request& req, const Router& router, const Policy& policy);

// The routes a `chat`-scope token may use (the rest of /api needs `admin`).
bool chat_scope_allows(const std::string& method, const std::string& path);

}  // namespace nurl::http
