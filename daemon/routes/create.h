// POST /api/create (ollama's API) on the job queue:
//   files {"model.gguf": digest}                → the model from that blob (quantize: a quantize job)
//   files {"*.safetensors", config, tokenizer…} → a convert job (type: quantize, else f16 as ollama)
//   from "/path/model.gguf" (Unix socket)       → imported (hard link or copy), or quantised
//   from "/path/checkpoint-dir" (Unix socket)   → a convert job
//   from "model"                                → its blob with new settings, or quantised
// Paths are accepted only when the Unix-socket peer may read them (peer-access.h). Jobs stream
// their progress; the model appears only once the job's output is complete and verified.
#pragma once

#include "http/message.h"
#include "routes/context.h"

namespace nurl {

http::Reply create_model(RouteContext& ctx, const http::Request& req);

}  // namespace nurl
