// What happens to every request between the socket and its route, socket-free so it is unit
// tested: the Host-header check (loopback listeners only), CORS (allow-list, preflight), then
// the router. The server calls handle_request() and only frames the Reply.
#pragma once

#include <string>
#include <vector>

#include "http/message.h"
#include "http/router.h"

namespace nurl::http {

struct Policy {
  bool check_host = false;           // TCP listener bound to loopback only
  std::string machine_hostname;
  std::vector<std::string> origins;  // CORS allow-list patterns (cors_allowed_origins())
};

Reply handle_request(Request& req, const Router& router, const Policy& policy);

}  // namespace nurl::http
