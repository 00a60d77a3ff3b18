// Model loading: open the GGUF, find the architecture in the registry, let it fill the config
// and bind the weights (all checks happen there), then sanity-check the result once more.
#include "engine/runtime/model.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "engine/arch/arch.h"
#include "engine/arch/transformer.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/packed-layout.h"

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
  m->kernels_ = select_kernel_set(detect_cpu_features().capped(opts.max_tier));
  if (opts.prefault) {
    volatile uint8_t sink = 0;
    const auto bytes = m->file_.bytes();
    for (size_t i = 0; i < bytes.size(); i += 4096) sink = sink + bytes[i];
  }
  if (opts.pack_weights) m->pack_weights();
  return std::shared_ptr<const Model>(std::move(m));
}

// Every matrix the forward pass multiplies by (the embedding table only as the tied output) whose
// type has a layout in this KernelSet is packed into one anonymous mapping, by all cores; the file's
// pages of each packed piece then leave the resident set, so the model stays about the file's size
// in memory (the page cache keeps them).
void Model::pack_weights() {
  std::vector<WeightMatrix*> mats;
  auto add = [&](WeightMatrix& w) {
    const MatKernels* k = kernels_.mat_for(w.type);
    if (w.present() && k && k->packed.rows > 0 && packed::has_layout(w.type)) mats.push_back(&w);
  };
  for (LayerWeights& L : weights_.layers) {
    if (L.wqkv_fused.present()) {
      add(L.wqkv_fused);
    } else {
      add(L.wq);
      add(L.wk);
      add(L.wv);
    }
    add(L.wo);
    if (L.w_gate_up_fused.present()) {
      add(L.w_gate_up_fused);
    } else {
      add(L.w_gate);
      add(L.w_up);
    }
    add(L.w_down);
  }
  add(weights_.output);
  if (mats.empty()) return;

  // Places: each matrix's groups at a 64-byte aligned offset.
  struct Place {
    WeightMatrix* w;
    int rows;
    size_t group_bytes, offset;
    int64_t n_groups;
  };
  std::vector<Place> places;
  size_t total = 0;
  for (WeightMatrix* w : mats) {
    const int rows = kernels_.mat_for(w->type)->packed.rows;
    const size_t gb = packed::group_bytes(w->type, rows, w->n_in);
    const int64_t n_groups = (w->n_out + rows - 1) / rows;
    places.push_back({w, rows, gb, total, n_groups});
    total += (gb * size_t(n_groups) + 63) / 64 * 64;
  }
  void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;  // no memory for a copy: multiply in the file's layout
  madvise(p, total, MADV_HUGEPAGE);  // fewer TLB misses while streaming the weights
  auto* base = static_cast<uint8_t*>(p);
  packed_ = std::shared_ptr<uint8_t>(base, [total](uint8_t* q) { munmap(q, total); });
  packed_bytes_ = total;

  // The norms and biases between the packed matrices are read at every step: with huge pages each
  // would keep 2 MiB of the file resident.
  file_.small_pages();

  // Work items of up to 64 groups, claimed by every core.
  struct Item {
    const Place* place;
    int64_t g0, g1;
  };
  std::vector<Item> items;
  for (const Place& pl : places)
    for (int64_t g = 0; g < pl.n_groups; g += 64) items.push_back({&pl, g, std::min(pl.n_groups, g + 64)});
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < items.size();) {
      const Item& it = items[i];
      const WeightMatrix& w = *it.place->w;
      packed::pack(w.type, it.place->rows, w.data, w.row_bytes, w.n_out, w.n_in, it.g0, it.g1,
                   base + it.place->offset);
      // The rows just packed leave the resident set at once, so the peak stays near the file's size.
      const int64_t r0 = it.g0 * it.place->rows, r1 = std::min(w.n_out, it.g1 * it.place->rows);
      file_.release(w.row(r0), size_t(r1 - r0) * w.row_bytes);
    }
  };
  const int n_threads = std::max(1, std::min(detect_cpu_features().n_cores, 16));
  std::vector<std::thread> threads;
  for (int t = 1; t < n_threads; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();

  for (const Place& pl : places) {
    pl.w->packed = base + pl.offset;
    pl.w->packed_group_bytes = pl.group_bytes;
    pl.w->packed_rows = pl.rows;
  }
  // A tied output is the embedding table: its lookups read the packed rows too (the file's
  // pages are gone from the resident set, and random lookups would bring them back).
  WeightMatrix& emb = weights_.token_embd;
  const WeightMatrix& out = weights_.output;
  if (out.packed && emb.data == out.data && emb.type == out.type && emb.n_in == out.n_in) {
    emb.packed = out.packed;
    emb.packed_group_bytes = out.packed_group_bytes;
    emb.packed_rows = out.packed_rows;
  }
}

uint64_t Model::kv_cache_bytes(int n_ctx, int n_seq, KvType kv) const {
  return KvCache::bytes_for(config_, n_ctx, n_seq, kv);
}

uint64_t Model::memory_estimate(int n_ctx, int n_seq, KvType kv, int n_batch) const {
  const uint64_t logits = static_cast<uint64_t>(std::max(1, n_seq)) * config_.n_vocab * 4;
  return file_size() + kv_cache_bytes(n_ctx, n_seq, kv) + ForwardState::scratch_bytes(config_, n_ctx, n_batch, 2) + logits;
}

}  // namespace nurl
