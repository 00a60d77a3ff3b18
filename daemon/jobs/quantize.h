// The quantize kind: GGUF → GGUF through the engine's quantize_model (common/engine/quant), into
// the store or a file, resumable (gguf-output.h).
//
// Request: "source" (an absolute .gguf the route has checked the client may read) or "blob"
// ("sha256:…", a model's blob in the store, e.g. for `create --quantize` FROM a model); "type"
// ("Q4_K_M", "Q8_0", "F16", …, case-insensitive); "name" (a model) or "output" (a file); the
// manifest's "system", "template", "parameters"; "threads" (capped by job_threads).
#pragma once

#include <memory>

#include "jobs/job-kind.h"

namespace nurl {

std::unique_ptr<JobKind> make_quantize_kind();

}  // namespace nurl
