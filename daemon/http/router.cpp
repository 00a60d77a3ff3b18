#include "http/router.h"

#include <exception>

namespace nurl::http {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  size_t i = (!path.empty() && path[0] == '/') ? 1 : 0;
  if (i >= path.size()) return out;
  while (true) {
    size_t j = path.find('/', i);
    out.push_back(path.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return out;
}

void Router::add(std::string method, std::string pattern, Handler h, Access access, Body body) {
  auto segments = split_path(pattern);
  routes_.push_back({std::move(method), std::move(pattern), std::move(segments), std::move(h), access, body});
}

bool Router::match(const Route& r, const std::vector<std::string>& segs, Request* req) {
  const auto& pat = r.segments;
  for (size_t i = 0; i < pat.size(); ++i) {
    if (!pat[i].empty() && pat[i][0] == '*') {
      std::string rest;
      for (size_t k = i; k < segs.size(); ++k) rest += (k > i ? "/" : "") + segs[k];
      if (rest.empty()) return false;
      if (req) req->params[pat[i].substr(1)] = rest;
      return true;
    }
    if (i >= segs.size()) return false;
    if (!pat[i].empty() && pat[i][0] == ':') {
      if (segs[i].empty()) return false;
      if (req) req->params[pat[i].substr(1)] = segs[i];
    } else if (pat[i] != segs[i]) {
      return false;
    }
  }
  return pat.size() == segs.size();
}

bool Router::has_path(const std::string& path) const {
  auto segs = split_path(path);
  for (const auto& r : routes_)
    if (match(r, segs, nullptr)) return true;
  return false;
}

bool Router::streams_body(const std::string& method, const std::string& path) const {
  auto segs = split_path(path);
  for (const auto& r : routes_)
    if (r.method == method && match(r, segs, nullptr)) return r.body == Body::streamed;
  return false;
}

Reply Router::dispatch(Request& req) const {
  auto segs = split_path(req.path);
  bool path_known = false;
  for (const auto& r : routes_) {
    if (!match(r, segs, nullptr)) continue;
    path_known = true;
    // HEAD is served by the GET handler unless a HEAD route exists; the server drops the body.
    bool method_ok = r.method == req.method || (req.method == "HEAD" && r.method == "GET");
    if (!method_ok) continue;
    req.route = r.pattern;
    if (r.access == Access::control && !(req.peer.unix_socket && req.peer.trusted))
      return error_response(403, "this route is served only on the control socket");
    req.params.clear();
    match(r, segs, &req);
    try {
      return r.handler(req);
    } catch (const std::exception& e) {
      return error_response(500, std::string("internal error: ") + e.what());
    }
  }
  if (path_known) return error_response(405, "method " + req.method + " not allowed for " + req.path);
  return error_response(404, "404 page not found");
}

}  // namespace nurl::http
