// POST /api/embed ({"embeddings": [[...]]}) and the legacy POST /api/embeddings ({"embedding": [...]}).
#pragma once

#include <optional>
#include <vector>

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_embed_routes(http::Router& r, RouteContext& ctx);

// `dimensions` truncates an embedding to its first N values and scales it back to unit length
// (the engine's embeddings are L2-normalised); unset or not shorter: unchanged.
std::vector<float> resize_embedding(std::vector<float> e, std::optional<int> dimensions);
}
