// POST /api/show (details, model_info from the GGUF metadata, template, parameters,
// capabilities; tensors when verbose) and GET /api/ps (resident models).
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_show_routes(http::Router& r, RouteContext& ctx);
}
