// The ModelLoader that the daemon uses: the real inference engine behind the scheduler's seam.
#pragma once

#include "engine/runtime/model.h"
#include "scheduler/model.h"

namespace nurl::sched {

// Models are loaded with `opts` (the kernel tier the configuration allows).
ModelLoader engine_loader(const LoadOptions& opts = {});

// Resident bytes of a GGUF model: the file (weights are mmapped) plus the KV cache of
// n_parallel sequences of n_ctx tokens (f32 keys and values), from the file's metadata.
Result<uint64_t> estimate_gguf_bytes(const LoadSpec& spec);

}  // namespace nurl::sched
