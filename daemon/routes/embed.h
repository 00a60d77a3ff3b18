// POST /api/embed ({"embeddings": [[...]]}) and the legacy POST /api/embeddings ({"embedding": [...]}).
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_embed_routes(http::Router& r, RouteContext& ctx);
}
