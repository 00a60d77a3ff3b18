// POST /api/generate and POST /api/chat: validate (400 before any work), resolve the model (404),
// build a sched::Job whose prepare() renders and tokenizes on the model's worker, submit it
// (503 when the queue is full) and stream the events back as ollama's NDJSON objects.
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_generate_routes(http::Router& r, RouteContext& ctx);
}
