// KernelSet: the compute kernels of one model, chosen once at load from the CPU's features
// (scalar reference, AVX2, AVX-VNNI or AVX512-VNNI: CpuTier) and then called through plain function pointers —
// no #ifdef or feature test at a call site. Threading is the caller's: every primitive works on
// a row range, so the engine splits [0, n_rows) across its threads.
//
// Matrix products. A weight matrix W has n_rows rows of n_cols elements in its GGUF type
// (row r starts at W + r·row_stride_bytes). Activations are first quantised per token row into
// the weight type's activation format (act_type: q8_0, q8_1, q8_K, f16, bf16 or f32), then
//   y[t·y_stride + r] = dot(W row r, x_t)   for r in [row_begin, row_end), t in [0, n_tokens)
// with x_t at x_quantised + t·x_stride_bytes. gemm_rows reads each weight row once per call, so
// a chunk of tokens shares one pass over the weights. n_cols must be a multiple of the weight
// type's block size (256 for k-quants); the engine checks that at load time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/quant/types.h"
#include "kernels/attention.h"
#include "kernels/cpu/cpu-features.h"

namespace nurl {

using QuantizeRowFn = void (*)(const float* x, void* out, int64_t n);
using VecDotFn = float (*)(int64_t n, const void* w_row, const void* x_row);
using GemmRowsFn = void (*)(const void* W, size_t row_stride_bytes, int64_t row_begin, int64_t row_end, int64_t n_cols,
                            const void* x_quantised, size_t x_stride_bytes, int n_tokens, float* y, int64_t y_stride);

// A gemm over an interleaved weight layout (kernels/cpu/packed-layout.h: groups of `rows` rows,
// packed once at load with packed::pack). Same contract as gemm_rows, except that W points at
// the packed groups, row_stride is the bytes of one group, and row_begin is a multiple of rows
// (row_end need not be: the rest of its group is not written).
struct PackedGemm {
  int rows = 0;               // rows per group; 0: no packed layout for this type in this set
  GemmRowsFn gemm = nullptr;
  int max_tokens = 32;        // tokens per call
};

// Everything needed to multiply by a matrix of one weight type.
struct MatKernels {
  GgmlType act_type = GgmlType::F32;     // format the activations must be quantised to
  QuantizeRowFn quantize_act = nullptr;  // f32 → act_type, n a multiple of act block size
  VecDotFn vec_dot = nullptr;            // one weight row · one activation row
  GemmRowsFn gemm_rows = nullptr;        // a row range × a chunk of tokens (see above)
  int max_tokens = 32;                   // tokens per gemm_rows call; kernels that block tokens
                                         // themselves take the whole batch (rows scaled once)
  const char* impl = "none";             // "ref", "avx2", "avx_vnni", "avx512": which variant
  PackedGemm packed;                     // the faster path, when the weights are packed for it
};

inline constexpr size_t kNumTypeIds = 40;  // GGUF type ids are < 40

struct KernelSet {
  std::string name;  // "ref", "avx2", "avx_vnni", "avx512" (what was picked; logs, /api/show)
  std::array<MatKernels, kNumTypeIds> mat{};

  // f32 → f16 rows for the KV cache.
  void (*f32_to_f16_row)(const float* x, uint16_t* y, int64_t n) = nullptr;
  // SwiGLU's gate: g[i] = silu(g[i]) · u[i], silu(x) = x / (1 + e^−x).
  void (*silu_mul)(float* g, const float* u, int64_t n) = nullptr;
  // Attention of one query token or a block of consecutive ones (causal, optional sliding
  // window) for a group of query heads sharing a KV head (kernels/attention.h).
  AttendFn attend = nullptr;

  // nullptr when there is no kernel for weight type t (the engine reports it at load).
  const MatKernels* mat_for(GgmlType t) const {
    const auto id = static_cast<size_t>(t);
    return id < kNumTypeIds && mat[id].gemm_rows ? &mat[id] : nullptr;
  }
  bool supports(GgmlType t) const { return mat_for(t) != nullptr; }

  // Bytes of one activation row of n elements for weight type t (the x_stride to use).
  size_t act_row_bytes(GgmlType weight_type, int64_t n) const;

  // x (n f32) → out in weight_type's activation format. weight_type must be supported.
  void quantize_activations(GgmlType weight_type, const float* x, void* out, int64_t n) const {
    mat[static_cast<size_t>(weight_type)].quantize_act(x, out, n);
  }
  void gemm_rows(GgmlType weight_type, const void* W, size_t row_stride_bytes, int64_t row_begin, int64_t row_end,
                 int64_t n_cols, const void* x_quantised, size_t x_stride_bytes, int n_tokens, float* y,
                 int64_t y_stride) const {
    mat[static_cast<size_t>(weight_type)].gemm_rows(W, row_stride_bytes, row_begin, row_end, n_cols, x_quantised,
                                                    x_stride_bytes, n_tokens, y, y_stride);
  }
};

// Scalar reference kernels for every supported weight type (the truth the tests compare with).
KernelSet reference_kernel_set();
// The fastest kernels this CPU runs; falls back to reference per type where no SIMD variant
// exists. Runs on any x86-64 (SIMD variants are only picked when cpuid reports them).
KernelSet select_kernel_set(const CpuFeatures& cpu);

}  // namespace nurl
