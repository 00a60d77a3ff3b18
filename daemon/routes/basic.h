// Liveness and version: HEAD|GET /, GET /api/version.
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_basic_routes(http::Router& r, RouteContext& ctx);
}
