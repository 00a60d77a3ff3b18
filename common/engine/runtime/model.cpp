// Model loading: open the GGUF, find the architecture in the registry, let it fill the config
// and bind the weights (all checks happen there), then sanity-check the result once more.
#include "engine/runtime/model.h"

#include <algorithm>

#include "engine/arch/arch.h"
#include "engine/arch/transformer.h"
#include "kernels/cpu/cpu-features.h"

namespace nurl {

Result<std::shared_ptr<const Model>> Model::load(const std::string& path, const LoadOptions& opts) {
  auto f = gguf::File::open(path);
  if (!f.ok()) return f.error().context("loading " + path);
  auto m = from_file(std::move(f).value(), opts);
  if (!m.ok()) return m.error().context("loading " + path);
  return m;
}

Result<std::shared_ptr<const Model>> Model::from_file(gguf::File file, const LoadOptions& opts) {
  std::shared_ptr<Model> m(new Model());
  m->file_ = std::move(file);
  NURL_ASSIGN(std::string arch, m->file_.get_string("general.architecture"));
  const ArchEntry* entry = find_arch(arch);
  if (!entry) {
    std::string known;
    for (const ArchEntry& a : arch_registry()) known += (known.empty() ? "" : ", ") + std::string(a.name);
    return Error(Code::unsupported, "general.architecture \"" + arch + "\" is not supported (supported: " + known + ")");
  }
  m->config_.arch = arch;
  NURL_TRY(entry->load(m->file_, m->config_, m->weights_));
  const TransformerConfig& c = m->config_;
  if (static_cast<int>(m->weights_.layers.size()) != c.n_layer || c.n_rot > c.head_dim ||
      c.layer_is_swa.size() != static_cast<size_t>(c.n_layer))
    return Error(Code::internal, "architecture " + arch + " left an inconsistent config");
  m->kernels_ = select_kernel_set(detect_cpu_features());
  if (opts.prefault) {
    volatile uint8_t sink = 0;
    const auto bytes = m->file_.bytes();
    for (size_t i = 0; i < bytes.size(); i += 4096) sink = sink + bytes[i];
  }
  return std::shared_ptr<const Model>(std::move(m));
}

uint64_t Model::kv_cache_bytes(int n_ctx, int n_seq, KvType kv) const {
  return KvCache::bytes_for(config_, n_ctx, n_seq, kv);
}

uint64_t Model::memory_estimate(int n_ctx, int n_seq, KvType kv, int n_batch) const {
  const uint64_t logits = static_cast<uint64_t>(std::max(1, n_seq)) * config_.n_vocab * 4;
  return file_size() + kv_cache_bytes(n_ctx, n_seq, kv) + ForwardState::scratch_bytes(config_, n_ctx, n_batch, 2) + logits;
}

}  // namespace nurl
