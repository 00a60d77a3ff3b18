// Linear layers over quantised weights: y = W·x for a block of activation rows.
// Activations are first converted to the weight's dot-product type (what llama.cpp's CPU backend
// does: F16 for F16 weights, BF16 for BF16, Q8_0/Q8_1/Q8_K for quantised ones), then every
// (weight row, activation row) pair is one vec_dot. The work is split over weight rows and each
// weight row is read once per block of activation rows (prompt chunks reuse it from cache).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/arch/config.h"

namespace nurl {

class ThreadPool;

// Dot product of one weight row (n elements of the weight type) with one activation row.
using DotFn = float (*)(int64_t n, const void* w_row, const void* act_row);
// Activation row conversion f32 → act type (n elements).
using ConvertFn = void (*)(const float* src, void* dst, int64_t n);

struct LinearKernel {
  GgmlType weight_type;
  GgmlType act_type;
  DotFn dot = nullptr;
  ConvertFn convert = nullptr;
};

// nullptr when the type has no dot product (load() reports it naming the tensor).
const LinearKernel* linear_kernel(GgmlType weight_type);

// Bytes one activation row of n elements takes in the given act type.
size_t act_row_bytes(GgmlType act_type, int64_t n);

// Converts n_rows rows of x (stride x_stride floats) into dst (stride dst_stride bytes).
void convert_activations(const LinearKernel& k, const float* x, int64_t x_stride, int n_rows, int64_t n,
                         uint8_t* dst, size_t dst_stride, ThreadPool& pool);

// y[t][r] = dot(W row r, act row t) for t < n_rows, r < W.n_out; y has stride y_stride floats.
// `act` was produced by convert_activations with this weight's kernel.
void matmul(const WeightMatrix& w, const LinearKernel& k, const uint8_t* act, size_t act_stride, int n_rows,
            float* y, int64_t y_stride, ThreadPool& pool);

// Dequantises row r of W (embedding lookup).
void dequant_row(const WeightMatrix& w, int64_t r, float* dst);
bool can_dequant(GgmlType t);

}  // namespace nurl
