// Linear layers: activation conversion and the multi-matrix, row-split matmul driver.
#include "engine/arch/linear.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "engine/arch/half.h"
#include "engine/quant/quant.h"
#include "engine/runtime/thread-pool.h"
#include "kernels/cpu/packed-layout.h"

namespace nurl {

void quantize_activations(const KernelSet& ks, GgmlType weight_type, const float* x, int64_t x_stride, int n_rows,
                          int64_t n, uint8_t* dst, size_t dst_stride, ThreadPool& pool) {
  if (n_rows < 8) {
    for (int t = 0; t < n_rows; ++t) ks.quantize_activations(weight_type, x + t * x_stride, dst + t * dst_stride, n);
    return;
  }
  pool.parallel_for(n_rows, [&](int t, int) {
    ks.quantize_activations(weight_type, x + t * x_stride, dst + t * dst_stride, n);
  });
}

namespace {

// One task of a matmul: rows [r0, r1) of one matrix over every activation row, self-contained
// (ThreadPool::parallel_for_recomputable: a late thread may still compute it after the job ended).
struct MatTask {
  GemmRowsFn gemm;
  const uint8_t* w;
  size_t w_stride;
  int64_t r0, r1, n_in;
  const uint8_t* act;
  size_t act_stride;
  int n_rows, tok_block;
  float* y;
  int64_t y_stride;
  const float* bias;

  // Rows [r0, r1) of every token, token-major; this thread's.
  float* result() const {
    thread_local std::vector<float> buf;
    const size_t n = static_cast<size_t>(r1 - r0) * static_cast<size_t>(n_rows);
    if (buf.size() < n) buf.resize(n);
    return buf.data();
  }
  // Rows [r0, r1) into `out` as the kernels address y: token t's row r at out[t·ys + r].
  void run(float* out, int64_t ys) const {
    for (int t0 = 0; t0 < n_rows; t0 += tok_block) {
      const int nt = std::min(tok_block, n_rows - t0);
      gemm(w, w_stride, r0, r1, n_in, act + static_cast<size_t>(t0) * act_stride, act_stride, nt, out + t0 * ys, ys);
    }
    if (!bias) return;
    for (int t = 0; t < n_rows; ++t)
      for (int64_t r = r0; r < r1; ++r) out[t * ys + r] += bias[r];
  }
  void compute() const { run(result() - r0, r1 - r0); }
  void publish() const {
    const float* out = result();
    const size_t n = static_cast<size_t>(r1 - r0);
    for (int t = 0; t < n_rows; ++t) std::memcpy(y + t * y_stride + r0, out + t * n, n * sizeof(float));
  }
};

// Generation steps (a few tokens) run as recomputable jobs: a stall of a thread that lost its
// core costs the step a recomputed task, not a scheduler time slice. Prompt chunks write their
// results in place (their outputs are too large to copy for little gain).
constexpr int kRecomputableMaxTokens = 8;

}  // namespace

void matmul(const KernelSet& ks, std::span<const MatJob> jobs, const uint8_t* act, size_t act_stride, int n_rows,
            ThreadPool& pool) {
  constexpr int kMaxJobs = 4;
  NURL_ASSERT(jobs.size() <= kMaxJobs);
  int64_t total_rows = 0;
  for (const MatJob& j : jobs) total_rows += j.w->n_out;
  // Rows per task: enough tasks to balance threads that may lose their core to another process,
  // few enough that a task amortises its claim. Multiple of 16 rows (the kernels' row tiles and
  // the packed layouts' groups).
  constexpr int64_t kRowAlign = 16;
  int64_t rows_per_task = std::max<int64_t>(kRowAlign, total_rows / (pool.n_threads() * 12));
  rows_per_task = (rows_per_task + kRowAlign - 1) / kRowAlign * kRowAlign;
  int task_begin[kMaxJobs + 1];
  task_begin[0] = 0;
  for (size_t j = 0; j < jobs.size(); ++j)
    task_begin[j + 1] = task_begin[j] + static_cast<int>((jobs[j].w->n_out + rows_per_task - 1) / rows_per_task);
  const int n_tasks = task_begin[jobs.size()];
  const auto prepare = [&](int task) {
    size_t j = 0;
    while (task >= task_begin[j + 1]) ++j;
    const MatJob& job = jobs[j];
    const WeightMatrix& w = *job.w;
    const int64_t r0 = static_cast<int64_t>(task - task_begin[j]) * rows_per_task;
    // Tokens per call as the kernel asks (32 keeps a chunk of activations in L1/L2).
    const MatKernels& mk = *ks.mat_for(w.type);
    MatTask m{mk.gemm_rows, w.data, w.row_bytes, r0, std::min(w.n_out, r0 + rows_per_task), w.n_in, act,
              act_stride, n_rows, mk.max_tokens, job.y, job.y_stride, job.bias};
    if (w.packed) {
      NURL_ASSERT(mk.packed.rows > 0 && kRowAlign % mk.packed.rows == 0);
      m.gemm = mk.packed.gemm;
      m.w = w.packed;
      m.w_stride = w.packed_group_bytes;
      m.tok_block = mk.packed.max_tokens;
    }
    return m;
  };
  if (n_rows <= kRecomputableMaxTokens) {
    pool.parallel_for_recomputable<MatTask>(n_tasks, prepare);
    return;
  }
  pool.parallel_for(n_tasks, [&](int task, int) {
    const MatTask m = prepare(task);
    m.run(m.y, m.y_stride);
  });
}

bool can_dequant(GgmlType t) {
  if (t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16) return true;
  const QuantTraits* q = quant_traits(t);
  return q && q->dequant_row;
}

void dequant_row(const WeightMatrix& w, int64_t r, float* dst) {
  const uint8_t* src = w.row(r);
  if (w.packed) {  // the file's pages of this matrix were dropped: the row from its packed group
    thread_local std::vector<uint8_t> row;
    row.resize(w.row_bytes);
    packed::unpack_row(w.type, w.packed_rows, w.packed, w.n_in, r, row.data());
    src = row.data();
  }
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
