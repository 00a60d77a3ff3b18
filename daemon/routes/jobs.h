// The job queue's API (nurllama extension; control socket only):
//   GET /api/jobs                    {"jobs":[{id, kind, source, name, state, progress, error, created_at}]}
//   GET /api/jobs/:id                one job with every event and its request; ?stream=true follows
//                                    its progress as NDJSON (ollama's progress lines + "stage", "job")
//   DELETE /api/jobs/:id             cancel: the job stops and its partial output is removed
//   POST /api/jobs                   {"kind":"convert"|"quantize"|"pull", …the kind's request}
//                                    starts (or attaches to) a job and streams its progress
// Paths in a request ("source", "output") must be readable (writable) by the peer (peer-access.h).
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {

void add_jobs_routes(http::Router& r, RouteContext& ctx);

}  // namespace nurl
