// Numeric traits of every tensor type: one table, one row per format (ggml's type_traits idea).
// Block structs with their size checks live in blocks.h; the scalar reference implementations
// in kernels/cpu/ref. Fast (SIMD, CUDA) kernels are chosen separately through KernelSet and are
// tested against these.
//
// Contract of the function pointers (n is a multiple of the type's block size):
//   dequant_row(src, dst, n)  : n elements of this type → f32
//   quantize_row(src, dst, n) : reference quantiser, f32 → n elements of this type (nullptr if none)
//   vec_dot(n, x, y) → float  : dot of one row x of this type with one row y of vec_dot_type
//                               (the activation type: F32, F16, BF16, Q8_0, Q8_1 or Q8_K)
#pragma once

#include <cstdint>
#include <span>

#include "engine/quant/types.h"

namespace nurl {

struct QuantTraits {
  GgmlType type;
  void (*dequant_row)(const void* src, float* dst, int64_t n);
  void (*quantize_row)(const float* src, void* dst, int64_t n);
  float (*vec_dot)(int64_t n, const void* x, const void* y);
  GgmlType vec_dot_type;
};

// nullptr when the type has no numeric support here (the GGUF reader still knows its geometry).
const QuantTraits* quant_traits(GgmlType t);

// Every type with numeric support, in id order (for table-driven tests and tools).
std::span<const QuantTraits> all_quant_traits();

}  // namespace nurl
