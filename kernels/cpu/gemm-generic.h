// gemm_rows built from a vec_dot: for each weight row of the range, dot it with every token of
// the chunk while the row is hot in L1 (weights stream from memory once per chunk).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernel-set.h"

namespace nurl {

template <VecDotFn Dot>
void gemm_rows_by_vec_dot(const void* W, size_t row_stride, int64_t row_begin, int64_t row_end, int64_t n_cols,
                          const void* xq, size_t x_stride, int n_tokens, float* y, int64_t y_stride) {
  const auto* w = static_cast<const uint8_t*>(W);
  const auto* x = static_cast<const uint8_t*>(xq);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* wr = w + size_t(r) * row_stride;
    for (int t = 0; t < n_tokens; ++t) y[t * y_stride + r] = Dot(n_cols, wr, x + size_t(t) * x_stride);
  }
}

}  // namespace nurl
