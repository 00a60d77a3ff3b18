// GET /metrics (Prometheus text format, see metrics/daemon-metrics.h) and GET /health
// (200 {"status":"ok"} while serving; 503 {"status":"starting"|"stopping"} otherwise).
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_metrics_routes(http::Router& r, RouteContext& ctx);
}
