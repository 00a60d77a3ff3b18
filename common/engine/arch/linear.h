// Linear layers over quantised weights: y = W·x for a block of activation rows, through the
// model's KernelSet. Activations are first converted per row to the weight's activation type
// (what llama.cpp's CPU backend does: F16 for F16 weights, BF16 for BF16, Q8_0/Q8_1/Q8_K for
// quantised ones); then gemm_rows runs over row ranges of the weights. Several matrices that read
// the same input (q|k|v, gate|up) run as one parallel job, so a layer has few synchronisations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/arch/config.h"
#include "kernels/kernel-set.h"

namespace nurl {

class ThreadPool;

// One matrix of a (possibly multi-matrix) product: y[t·y_stride + r] = W_r · x_t (+ bias[r]).
struct MatJob {
  const WeightMatrix* w = nullptr;
  float* y = nullptr;
  int64_t y_stride = 0;
  const float* bias = nullptr;
};

// Converts n_rows rows of x (n floats each, stride x_stride) into the activation type of
// weight_type, rows of dst_stride bytes.
void quantize_activations(const KernelSet& ks, GgmlType weight_type, const float* x, int64_t x_stride, int n_rows,
                          int64_t n, uint8_t* dst, size_t dst_stride, ThreadPool& pool);

// Runs every job over n_rows activation rows in one parallel job. All jobs' weights must share
// one activation type and n_in; `act` holds the rows quantised for it.
void matmul(const KernelSet& ks, std::span<const MatJob> jobs, const uint8_t* act, size_t act_stride, int n_rows,
            ThreadPool& pool);

// Dequantises row r of W (embedding lookup).
void dequant_row(const WeightMatrix& w, int64_t r, float* dst);
bool can_dequant(GgmlType t);

}  // namespace nurl
