// Who a web chat request comes from: the nl_client cookie (32 hex digits, 128 bits from the OS
// CSPRNG), minted on the first request that lacks a valid one. The cookie is HttpOnly,
// SameSite=Lax, Path=/, and Secure when the request came over TLS through a proxy we trust
// (trusted_proxies + X-Forwarded-Proto/Forwarded). A malformed or forged cookie is simply
// replaced: ids are unguessable and every history query is scoped to the id.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "config.h"
#include "http/message.h"

namespace nurl {

struct WebClient {
  std::string id;
  bool fresh = false;    // minted now: the reply must set the cookie
  std::string user;      // the scheduler's fairness key (derived, so logs never show the id)
};

Result<WebClient> web_client(const http::Request& req);
bool request_is_secure(const http::Request& req, const Config& cfg);
std::string client_cookie(const WebClient& c, bool secure);

// Adds Set-Cookie when the client id is new.
void attach_cookie(http::Reply& reply, const WebClient& c, bool secure);

// JSON bodies of the web routes.
using WebJson = nlohmann::json;
http::Response web_json(int status, const WebJson& j);
std::string web_dump(const WebJson& j);

}  // namespace nurl
