#include "routes/metrics.h"

#include "metrics/daemon-metrics.h"

namespace nurl {

void add_metrics_routes(http::Router& r, RouteContext& ctx) {
  r.add("GET", "/metrics", [&ctx](const http::Request&) {
    if (!ctx.metrics) return http::Reply(http::error_response(503, "metrics are not collected"));
    http::Response res;
    res.content_type = "text/plain; version=0.0.4; charset=utf-8";
    res.body = ctx.metrics->exposition(ctx.scheduler);
    return http::Reply(std::move(res));
  });
  r.add("GET", "/health", [&ctx](const http::Request&) {
    const Phase p = ctx.phase ? ctx.phase->load() : Phase::serving;
    if (p == Phase::serving) return http::Reply(http::json_response(200, R"({"status":"ok"})"));
    return http::Reply(http::json_response(503, p == Phase::starting ? R"({"status":"starting"})"
                                                                    : R"({"status":"stopping"})"));
  });
}

}  // namespace nurl
