// Model management routes (ollama API + extensions), over the Store and the JobManager:
//   GET /api/tags · DELETE /api/delete · POST /api/copy · POST /api/create
//   HEAD|POST /api/blobs/:digest · POST /api/pull (NDJSON progress) · DELETE /api/pull (cancel)
//   POST /api/verify  (the job routes are jobs.h, /api/create create.h)
// Server-side file paths (pull ./x.gguf, create FROM /path) are accepted only from Unix-socket
// peers that may read them (peer-access.h); remote clients upload through /api/blobs, whose body
// streams to disk (blob-upload.h).
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_models_routes(http::Router& r, RouteContext& ctx);
}
