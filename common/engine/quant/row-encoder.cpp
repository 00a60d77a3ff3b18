// RowEncoder: chunked, threaded f32 → type encoding of one tensor (see row-encoder.h).
#include "engine/quant/row-encoder.h"

#include <algorithm>
#include <optional>

#include "engine/quant/quant.h"

namespace nurl::quant {

RowEncoder::RowEncoder(int threads, uint64_t chunk_elems)
    : pool_(std::max(1, threads)), chunk_elems_(std::max<uint64_t>(chunk_elems, 1)) {}

Result<void> RowEncoder::encode(GgmlType type, uint64_t n_cols, uint64_t n_rows, const FillFn& fill,
                                const SinkFn& sink) {
  const TypeInfo& ti = type_info(type);
  const QuantTraits* qt = quant_traits(type);
  if (!qt || !qt->quantize_row)
    return Error(Code::unsupported, "no quantiser for type " + std::string(ti.name));
  if (n_cols == 0 || n_cols % ti.block_elems != 0)
    return Error(Code::invalid_argument, "row length " + std::to_string(n_cols) + " is not a multiple of " +
                                             std::string(ti.name) + "'s block size " + std::to_string(ti.block_elems));
  const uint64_t rb = row_bytes(ti, n_cols);
  const uint64_t rows_per_chunk = std::max<uint64_t>(1, chunk_elems_ / n_cols);
  const int n_threads = pool_.max_threads();
  for (uint64_t r0 = 0; r0 < n_rows; r0 += rows_per_chunk) {
    const uint64_t n = std::min(rows_per_chunk, n_rows - r0);
    f32_.resize(n * n_cols);
    out_.resize(n * rb);
    // Tasks of a few rows each, claimed one by one (a thread that loses its core takes fewer).
    const uint64_t rows_per_task = std::max<uint64_t>(1, n / (uint64_t(n_threads) * 8));
    const int n_tasks = int((n + rows_per_task - 1) / rows_per_task);
    std::vector<std::optional<Error>> errors(static_cast<size_t>(n_tasks));
    pool_.parallel_for(n_tasks, [&](int task, int) {
      const uint64_t a = uint64_t(task) * rows_per_task, b = std::min(n, a + rows_per_task);
      float* src = f32_.data() + a * n_cols;
      if (auto r = fill(r0 + a, b - a, src); !r.ok()) {
        errors[size_t(task)] = r.error();
        return;
      }
      for (uint64_t r = a; r < b; ++r) qt->quantize_row(f32_.data() + r * n_cols, out_.data() + r * rb, int64_t(n_cols));
    });
    for (auto& e : errors)
      if (e) return *e;
    NURL_TRY(sink(out_));
  }
  return {};
}

}  // namespace nurl::quant
