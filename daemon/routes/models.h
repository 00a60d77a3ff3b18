// Model management routes (ollama API + extensions), over the Store and the JobManager:
//   GET /api/tags · DELETE /api/delete · POST /api/copy · POST /api/create
//   HEAD|POST /api/blobs/:digest · POST /api/pull (NDJSON progress) · DELETE /api/pull (cancel)
//   POST /api/verify · GET /api/jobs, DELETE /api/jobs/:id (control socket only)
// Server-side file paths (pull ./x.gguf, create FROM /path) are accepted only from Unix-socket
// peers; remote clients upload through /api/blobs instead.
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_models_routes(http::Router& r, RouteContext& ctx);
}
