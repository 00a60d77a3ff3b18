// The convert kind: a Hugging Face checkpoint → GGUF through the engine's convert_checkpoint
// (common/engine/convert), into the store or a file, resumable (gguf-output.h).
//
// Request: "source" (an absolute checkpoint directory the route has checked the client may read)
// or "files" ({"config.json": "sha256:…", "model.safetensors": "sha256:…", …}: blobs uploaded
// through /api/blobs, linked under those names into the job's private directory); "type" (f32,
// f16, bf16, q8_0 or any quantisation; default q8_0); "name" (a model) or "output" (a file);
// the manifest's "system", "template", "parameters"; "threads" (capped by job_threads).
// Conversions of one checkpoint to one type and target attach to one job.
#pragma once

#include <memory>

#include "jobs/job-kind.h"

namespace nurl {

std::unique_ptr<JobKind> make_convert_kind();

}  // namespace nurl
