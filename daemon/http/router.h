// Router: (method, path pattern) → handler. Patterns are literal paths whose segments may be
// ":name" (one segment, stored in Request::params) or a final "*name" (the rest of the path).
// Dispatch answers 404 for unknown paths and 405 for known paths with another method.
//
// How to add a route: write a pure function `Reply f(const Request&)` in daemon/routes/<family>.cpp
// and register it from that file's add_<family>_routes(Router&, RouteContext&) with
// `r.add("POST", "/api/thing", handler)`; list add_<family>_routes in routes/routes.cpp.
// Routes marked Access::control are served only on the Unix socket to authorised peers.
// Routes marked Body::streamed get no Request::body: the server leaves the body on the connection
// and hands the handler a Request::body_reader to pull it through (bulk uploads, no size cap).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "http/message.h"

namespace nurl::http {

enum class Access { any, control };
enum class Body { buffered, streamed };

using Handler = std::function<Reply(const Request&)>;

class Router {
 public:
  void add(std::string method, std::string pattern, Handler h, Access access = Access::any,
           Body body = Body::buffered);
  // Fills req.params on a match. Never throws for bad input; handler exceptions become 500.
  Reply dispatch(Request& req) const;
  // true when some route matches the path (any method); used for OPTIONS preflight.
  bool has_path(const std::string& path) const;
  // true when the route for (method, path) takes its body as a stream (Body::streamed).
  bool streams_body(const std::string& method, const std::string& path) const;

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;
    Handler handler;
    Access access;
    Body body;
  };
  static bool match(const Route& r, const std::vector<std::string>& segs, Request* req);
  std::vector<Route> routes_;
};

// Splits "/a/b/c" into {"a","b","c"}; empty segments are kept so "//" never matches a pattern.
std::vector<std::string> split_path(const std::string& path);

}  // namespace nurl::http
