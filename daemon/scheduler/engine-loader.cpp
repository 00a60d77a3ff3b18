#include "scheduler/engine-loader.h"

#include <filesystem>

#include "engine/gguf/gguf.h"

namespace nurl::sched {

Result<uint64_t> estimate_gguf_bytes(const LoadSpec& spec) {
  NURL_ASSIGN(auto f, gguf::File::open(spec.path));
  NURL_ASSIGN(std::string arch, f.get_string("general.architecture"));
  NURL_ASSIGN(uint32_t n_layer, f.get_u32(arch + ".block_count"));
  NURL_ASSIGN(uint32_t n_embd, f.get_u32(arch + ".embedding_length"));
  NURL_ASSIGN(uint32_t n_head, f.get_u32(arch + ".attention.head_count"));
  NURL_ASSIGN(uint32_t n_head_kv, f.get_u32_or(arch + ".attention.head_count_kv", n_head));
  NURL_ASSIGN(uint32_t head_dim, f.get_u32_or(arch + ".attention.key_length", n_head ? n_embd / n_head : 0));
  std::error_code ec;
  uint64_t file_bytes = std::filesystem::file_size(spec.path, ec);
  if (ec) return Error(Code::io, spec.path + ": " + ec.message());
  uint64_t kv = 2ull * n_layer * static_cast<uint64_t>(spec.n_ctx) * static_cast<uint64_t>(spec.n_parallel) *
                n_head_kv * head_dim * sizeof(float);
  return file_bytes + kv;
}

ModelLoader engine_loader() {
  ModelLoader l;
  l.estimate = estimate_gguf_bytes;
  l.load = [](const LoadSpec& spec) -> Result<std::shared_ptr<LoadedModel>> {
    // TODO(engine): adapt Model::load + the batch runner once the engine's API is on main.
    return Error(Code::unsupported, spec.path + ": the inference engine is not part of this build yet");
  };
  return l;
}

}  // namespace nurl::sched
