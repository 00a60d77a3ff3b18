#include "http/pipeline.h"

#include "http/security.h"

namespace nurl::http {

namespace {

void add_headers(Reply& reply, const std::vector<std::pair<std::string, std::string>>& hs) {
  std::visit([&](auto& r) { r.headers.insert(r.headers.end(), hs.begin(), hs.end()); }, reply);
}

}  // namespace

Reply handle_request(Request& req, const Router& router, const Policy& policy) {
  if (req.peer.unix_socket && !req.peer.trusted)
    return error_response(403, "peer uid " + std::to_string(req.peer.uid) +
                                   " may not use this socket (same user, root or the service group only)");
  if (!req.peer.unix_socket && policy.check_host &&
      !host_header_allowed(req.header("host"), policy.machine_hostname)) {
    return error_response(403, "host \"" + req.header("host") + "\" is not allowed");
  }

  std::vector<std::pair<std::string, std::string>> cors;
  const std::string& origin = req.header("origin");
  if (!origin.empty()) {
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

  Reply reply = router.dispatch(req);
  if (!cors.empty()) add_headers(reply, cors);
  return reply;
}

}  // namespace nurl::http
