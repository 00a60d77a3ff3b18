// Linear layers: kernel table per weight type and the row-split matmul driver.
// F32/F16/BF16 dots are implemented here (F16 with an AVX2+F16C variant chosen at run time);
// quantised formats use the quant traits table (engine/quant/quant.h).
#include "engine/arch/linear.h"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "engine/arch/half.h"
#include "engine/quant/quant.h"
#include "engine/runtime/thread-pool.h"
#include "kernels/cpu/cpu-features.h"

namespace nurl {
namespace {

float dot_f32(int64_t n, const void* w, const void* a) {
  const float* x = static_cast<const float*>(w);
  const float* y = static_cast<const float*>(a);
  float s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += x[i + j] * y[i + j];
  float r = 0;
  for (; i < n; ++i) r += x[i] * y[i];
  return r + ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

float dot_f16(int64_t n, const void* w, const void* a) {
  const uint16_t* x = static_cast<const uint16_t*>(w);
  const uint16_t* y = static_cast<const uint16_t*>(a);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(f16_to_f32(x[i]) * f16_to_f32(y[i]));
  return static_cast<float>(s);
}

float dot_bf16(int64_t n, const void* w, const void* a) {
  const uint16_t* x = static_cast<const uint16_t*>(w);
  const uint16_t* y = static_cast<const uint16_t*>(a);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(bf16_to_f32(x[i]) * bf16_to_f32(y[i]));
  return static_cast<float>(s);
}

void convert_f32(const float* src, void* dst, int64_t n) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }
void convert_f16(const float* src, void* dst, int64_t n) {
  uint16_t* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = f32_to_f16(src[i]);
}
void convert_bf16(const float* src, void* dst, int64_t n) {
  uint16_t* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]);
}

#if defined(__x86_64__)
#define NURL_LD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))
__attribute__((target("avx2,fma,f16c"))) float dot_f16_avx2(int64_t n, const void* w, const void* a) {
  const uint16_t* x = static_cast<const uint16_t*>(w);
  const uint16_t* y = static_cast<const uint16_t*>(a);
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(NURL_LD_F16(x + i), NURL_LD_F16(y + i), s0);
    s1 = _mm256_fmadd_ps(NURL_LD_F16(x + i + 8), NURL_LD_F16(y + i + 8), s1);
    s2 = _mm256_fmadd_ps(NURL_LD_F16(x + i + 16), NURL_LD_F16(y + i + 16), s2);
    s3 = _mm256_fmadd_ps(NURL_LD_F16(x + i + 24), NURL_LD_F16(y + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) {
    s0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))),
                         _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i))), s0);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float r = _mm_cvtss_f32(h);
  for (; i < n; ++i) r += f16_to_f32(x[i]) * f16_to_f32(y[i]);
  return r;
}

__attribute__((target("avx2,fma"))) float dot_f32_avx2(int64_t n, const void* w, const void* a) {
  const float* x = static_cast<const float*>(w);
  const float* y = static_cast<const float*>(a);
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
  __m256 s = _mm256_add_ps(s0, s1);
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float r = _mm_cvtss_f32(h);
  for (; i < n; ++i) r += x[i] * y[i];
  return r;
}

__attribute__((target("avx2,f16c"))) void convert_f16_f16c(const float* src, void* dst, int64_t n) {
  uint16_t* d = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) d[i] = f32_to_f16(src[i]);
}
#endif

// Built once: float formats here, quantised ones from the traits table.
struct KernelTable {
  std::array<LinearKernel, 64> k{};
  std::array<bool, 64> have{};

  KernelTable() {
    CpuFeatures cpu = detect_cpu_features();
    bool x86 = false;
#if defined(__x86_64__)
    x86 = cpu.avx2 && cpu.fma && cpu.f16c;
#endif
    set({GgmlType::F32, GgmlType::F32, dot_f32, convert_f32});
    set({GgmlType::F16, GgmlType::F16, dot_f16, convert_f16});
    set({GgmlType::BF16, GgmlType::BF16, dot_bf16, convert_bf16});
#if defined(__x86_64__)
    if (x86) {
      set({GgmlType::F32, GgmlType::F32, dot_f32_avx2, convert_f32});
      set({GgmlType::F16, GgmlType::F16, dot_f16_avx2, convert_f16_f16c});
    }
#endif
    for (uint32_t id = 2; id < 64; ++id) {
      auto ti = type_info(id);
      if (!ti) continue;
      const QuantTraits* q = quant_traits(ti->type);
      if (!q || !q->vec_dot) continue;
      const QuantTraits* a = quant_traits(q->vec_dot_type);
      if (!a || !a->quantize_row) continue;
      if (ti->type == GgmlType::F16 || ti->type == GgmlType::BF16) continue;
      set({ti->type, q->vec_dot_type, q->vec_dot, a->quantize_row});
    }
  }
  void set(const LinearKernel& lk) {
    auto i = static_cast<size_t>(lk.weight_type);
    k[i] = lk;
    have[i] = true;
  }
};

const KernelTable& table() {
  static const KernelTable t;  // immutable after construction
  return t;
}

}  // namespace

const LinearKernel* linear_kernel(GgmlType t) {
  auto i = static_cast<size_t>(t);
  if (i >= 64 || !table().have[i]) return nullptr;
  return &table().k[i];
}

size_t act_row_bytes(GgmlType act_type, int64_t n) { return row_bytes(type_info(act_type), static_cast<uint64_t>(n)); }

void convert_activations(const LinearKernel& k, const float* x, int64_t x_stride, int n_rows, int64_t n,
                         uint8_t* dst, size_t dst_stride, ThreadPool& pool) {
  if (n_rows < 8) {
    for (int t = 0; t < n_rows; ++t) k.convert(x + t * x_stride, dst + t * dst_stride, n);
    return;
  }
  pool.parallel_for(n_rows, [&](int t, int) { k.convert(x + t * x_stride, dst + t * dst_stride, n); });
}

void matmul(const WeightMatrix& w, const LinearKernel& k, const uint8_t* act, size_t act_stride, int n_rows,
            float* y, int64_t y_stride, ThreadPool& pool) {
  constexpr int kTokBlock = 16;
  const int64_t n_out = w.n_out;
  // Rows per task: enough tasks for balance (threads may lose their core), few enough to amortise.
  int64_t rows_per_task = std::max<int64_t>(8, n_out / (pool.n_threads() * 16));
  rows_per_task = (rows_per_task + 7) / 8 * 8;
  const int n_tasks = static_cast<int>((n_out + rows_per_task - 1) / rows_per_task);
  const DotFn dot = k.dot;
  const int64_t n = w.n_in;
  pool.parallel_for(n_tasks, [&](int task, int) {
    const int64_t r0 = task * rows_per_task;
    const int64_t r1 = std::min(n_out, r0 + rows_per_task);
    for (int t0 = 0; t0 < n_rows; t0 += kTokBlock) {
      const int t1 = std::min(n_rows, t0 + kTokBlock);
      for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* wr = w.row(r);
        for (int t = t0; t < t1; ++t) y[t * y_stride + r] = dot(n, wr, act + t * act_stride);
      }
    }
  });
}

bool can_dequant(GgmlType t) {
  if (t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16) return true;
  const QuantTraits* q = quant_traits(t);
  return q && q->dequant_row;
}

void dequant_row(const WeightMatrix& w, int64_t r, float* dst) {
  const uint8_t* src = w.row(r);
  switch (w.type) {
    case GgmlType::F32:
      std::memcpy(dst, src, static_cast<size_t>(w.n_in) * 4);
      return;
    case GgmlType::F16:
      for (int64_t i = 0; i < w.n_in; ++i) dst[i] = f16_to_f32(reinterpret_cast<const uint16_t*>(src)[i]);
      return;
    case GgmlType::BF16:
      for (int64_t i = 0; i < w.n_in; ++i) dst[i] = bf16_to_f32(reinterpret_cast<const uint16_t*>(src)[i]);
      return;
    default:
      quant_traits(w.type)->dequant_row(src, dst, w.n_in);
  }
}

}  // namespace nurl
