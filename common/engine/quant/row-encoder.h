// RowEncoder: streams one tensor's rows through f32 into a target type with a thread pool, a
// chunk of rows at a time, so memory stays one chunk whatever the tensor's size. The rows come
// from a caller's `fill` (dequantise a GGUF tensor, convert and transform a checkpoint tensor),
// called concurrently for disjoint row ranges; encoded chunks go to `sink` in order.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/error.h"
#include "engine/quant/types.h"
#include "engine/runtime/thread-pool.h"

namespace nurl::quant {

class RowEncoder {
 public:
  // threads counts the caller (1 = no extra thread). chunk_elems bounds the f32 rows per chunk.
  explicit RowEncoder(int threads, uint64_t chunk_elems = uint64_t(4) << 20);

  using FillFn = std::function<Result<void>(uint64_t row_begin, uint64_t n_rows, float* dst)>;
  using SinkFn = std::function<Result<void>(std::span<const uint8_t> bytes)>;

  // n_rows rows of n_cols elements (n_cols a multiple of `type`'s block) → `type`. F32 rows are
  // passed through; other types need a reference quantiser (an error names the type otherwise).
  Result<void> encode(GgmlType type, uint64_t n_cols, uint64_t n_rows, const FillFn& fill, const SinkFn& sink);

  int threads() const { return pool_.max_threads(); }

 private:
  ThreadPool pool_;
  uint64_t chunk_elems_;
  std::vector<float> f32_;
  std::vector<uint8_t> out_;
};

}  // namespace nurl::quant
