// Micro-benchmark (not a test): single-thread gemm_rows throughput per weight type on a
// 4096×4096 matrix (--shape ROWSxCOLS for another), in GB/s of weight bytes streamed. Enough
// copies of the matrix are cycled to exceed the caches, so n_tokens = 1 (generation) measures the
// memory-bound case; n_tokens = 32 (a prompt chunk) shows how much the kernel gains from reusing
// each weight row. Figures are per second of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so
// a machine shared with other work still gives the kernel's own speed; wall-clock GB/s is
// printed too.
// Usage: kernels_bench [--ref] [--tier scalar|avx2|avx_vnni|avx512] [--shape RxC] [--bandwidth]
// [type ...] (default: every type, the CPU's best kernels). --bandwidth first measures a
// STREAM-like read of a 1 GiB buffer (far larger than any L3) with one and two threads: the
// memory limit that generation (n_tokens = 1) streams against.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/quant/blocks.h"
#include "engine/quant/quant.h"
#include "kernels/cpu/packed-layout.h"
#include "kernels/kernel-set.h"

namespace nurl {
namespace {

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// A matrix with realistic values: 64 distinct quantised rows, repeated (speed does not depend
// on the values, but NaN or subnormal scales from random bytes could).
std::vector<uint8_t> make_matrix(GgmlType t, int64_t n_rows, int64_t n_cols, std::mt19937& rng) {
  const TypeInfo& ti = type_info(t);
  const size_t rb = row_bytes(ti, uint64_t(n_cols));
  std::vector<uint8_t> base(rb * 64);
  const QuantTraits* qt = quant_traits(t);
  if (qt->quantize_row) {
    std::normal_distribution<float> nd(0.f, 0.02f);
    std::vector<float> row(static_cast<size_t>(n_cols));
    for (int r = 0; r < 64; ++r) {
      for (auto& v : row) v = nd(rng);
      qt->quantize_row(row.data(), base.data() + size_t(r) * rb, n_cols);
    }
  } else {
    for (auto& b : base) b = uint8_t(rng());
    size_t off_d = 0;
    if (t == GgmlType::Q2_K) off_d = offsetof(BlockQ2_K, d);
    if (t == GgmlType::Q3_K) off_d = offsetof(BlockQ3_K, d);
    for (size_t off = 0; off < base.size(); off += ti.block_bytes) {
      const f16_bits h = f32_to_fp16(0.001f);
      std::memcpy(&base[off + off_d], &h, 2);
      if (t == GgmlType::Q2_K) std::memcpy(&base[off + offsetof(BlockQ2_K, dmin)], &h, 2);
    }
  }
  std::vector<uint8_t> w(rb * size_t(n_rows));
  for (int64_t r = 0; r < n_rows; ++r) std::memcpy(w.data() + size_t(r) * rb, base.data() + size_t(r % 64) * rb, rb);
  return w;
}

void bench_type(const KernelSet& ks, GgmlType t, int64_t n_rows, int64_t n_cols) {
  const MatKernels* k = ks.mat_for(t);
  if (!k) return;
  std::mt19937 rng(1);
  const size_t rb = row_bytes(type_info(t), uint64_t(n_cols));
  const size_t mat_bytes = rb * size_t(n_rows);
  const auto w = make_matrix(t, n_rows, n_cols, rng);
  const int n_copies = int(std::max<size_t>(1, (size_t(512) << 20) / mat_bytes));
  std::vector<std::vector<uint8_t>> mats(size_t(n_copies), w);

  std::normal_distribution<float> nd(0.f, 1.f);
  const int kMaxTok = 32;
  std::vector<float> xf(size_t(n_cols) * kMaxTok);
  for (auto& v : xf) v = nd(rng);
  const size_t xs = ks.act_row_bytes(t, n_cols);
  std::vector<uint8_t> xq(xs * kMaxTok);
  for (int j = 0; j < kMaxTok; ++j) k->quantize_act(xf.data() + size_t(j) * n_cols, xq.data() + j * xs, n_cols);
  std::vector<float> y(size_t(n_rows) * kMaxTok);

  // Five trials of at least ~0.15 s each per token count, cycling through the copies so every
  // pass reads from memory; the best trial is reported (a shared VM's noise only slows a trial).
  const auto measure = [&](const char* label, auto&& gemm) {
    std::printf("%-6s %-13s %5.1f MB", std::string(type_name(t)).c_str(), label, double(mat_bytes) / 1e6);
    for (int n_tok : {1, 32}) {
      double best_cpu_per_pass = 1e30, best_wall_per_pass = 1e30;
      int passes_total = 0;
      for (int trial = 0; trial < 5; ++trial) {
        int passes = 0;
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = thread_cpu_seconds();
        double cpu = 0;
        while (cpu < 0.15 || passes < 2) {
          gemm(size_t((passes_total + passes) % n_copies), n_tok);
          ++passes;
          cpu = thread_cpu_seconds() - c0;
        }
        passes_total += passes;
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best_cpu_per_pass = std::min(best_cpu_per_pass, cpu / passes);
        best_wall_per_pass = std::min(best_wall_per_pass, wall / passes);
      }
      const double gbps = double(mat_bytes) / best_cpu_per_pass / 1e9;
      const double gmac = double(n_rows) * n_cols * n_tok / best_cpu_per_pass / 1e9;
      std::printf("  tok=%-2d %6.2f GB/s %6.2f GMAC/s (wall %5.2f GB/s)", n_tok, gbps, gmac,
                  double(mat_bytes) / best_wall_per_pass / 1e9);
    }
  };
  measure(k->impl, [&](size_t copy, int n_tok) {
    k->gemm_rows(mats[copy].data(), rb, 0, n_rows, n_cols, xq.data(), xs, n_tok, y.data(), n_rows);
  });
  if (k->packed.rows > 0) {  // the same copies in the interleaved layout
    std::printf("\n");
    const int R = k->packed.rows;
    const size_t gb = packed::group_bytes(t, R, n_cols);
    std::vector<std::vector<uint8_t>> packs;
    for (const auto& m : mats) {
      packs.emplace_back(gb * size_t(n_rows / R));
      packed::pack(t, R, m.data(), rb, n_rows, n_cols, 0, n_rows / R, packs.back().data());
    }
    const std::string label = std::string(k->impl == std::string("avx2") ? ks.name : k->impl) + " packed";
    measure(label.c_str(), [&](size_t copy, int n_tok) {
      k->packed.gemm(packs[copy].data(), gb, 0, n_rows, n_cols, xq.data(), xs, n_tok, y.data(), n_rows);
    });
  }
  // Activation quantisation cost per token row, for scale.
  const double q0 = thread_cpu_seconds();
  for (int r = 0; r < 2000; ++r) k->quantize_act(xf.data(), xq.data(), n_cols);
  const double us = (thread_cpu_seconds() - q0) / 2000 * 1e6;
  std::printf("  quant_act %.1f us\n", us);
}

// Read bandwidth: every thread sums its own part of one large buffer with 256-bit loads (plain
// C++ the compiler vectorises at -O3 is enough: the loop is memory-bound), best of five passes.
double read_bandwidth_gbs(const std::vector<uint64_t>& buf, int n_threads) {
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    std::vector<uint64_t> sums(static_cast<size_t>(n_threads));
    const size_t per = buf.size() / size_t(n_threads);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (int i = 0; i < n_threads; ++i)
      ts.emplace_back([&, i] {
        const uint64_t* p = buf.data() + per * size_t(i);
        uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (size_t k = 0; k + 4 <= per; k += 4) {
          a0 += p[k];
          a1 += p[k + 1];
          a2 += p[k + 2];
          a3 += p[k + 3];
        }
        sums[size_t(i)] = a0 + a1 + a2 + a3;
      });
    for (auto& t : ts) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, double(per * size_t(n_threads) * 8) / s / 1e9);
    if (sums[0] == 42) std::printf(" ");  // keep the sums alive
  }
  return best;
}

}  // namespace
}  // namespace nurl

int main(int argc, char** argv) {
  using namespace nurl;
  bool use_ref = false, bandwidth = false;
  CpuTier tier = CpuTier::avx512;
  int64_t n_rows = 4096, n_cols = 4096;
  std::vector<GgmlType> types;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--ref") {
      use_ref = true;
    } else if (std::string(argv[i]) == "--bandwidth") {
      bandwidth = true;
    } else if (std::string(argv[i]) == "--tier" && i + 1 < argc) {
      const std::string name = argv[++i];
      bool found = false;
      for (CpuTier t : kCpuTiers)
        if (name == tier_name(t)) tier = t, found = true;
      if (!found) {
        std::fprintf(stderr, "unknown tier '%s'\n", name.c_str());
        return 2;
      }
    } else if (std::string(argv[i]) == "--shape" && i + 1 < argc) {
      long long r = 0, c = 0;
      if (std::sscanf(argv[++i], "%lldx%lld", &r, &c) != 2 || r < 64 || c < 256 || r % 64 || c % 256) {
        std::fprintf(stderr, "--shape wants ROWSxCOLS, rows a multiple of 64, columns of 256\n");
        return 2;
      }
      n_rows = r, n_cols = c;
    } else if (auto t = type_from_name(argv[i])) {
      types.push_back(*t);
    } else {
      std::fprintf(stderr, "unknown type '%s'\n", argv[i]);
      return 2;
    }
  }
  if (types.empty())
    types = {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::F16,
             GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_NL,
             GgmlType::IQ4_XS, GgmlType::BF16, GgmlType::F32};
  const CpuFeatures cpu = detect_cpu_features();
  if (bandwidth) {
    const std::vector<uint64_t> buf(size_t(1) << 27, 1);  // 1 GiB
    std::printf("read bandwidth (1 GiB buffer): 1 thread %.1f GB/s, 2 threads %.1f GB/s\n",
                read_bandwidth_gbs(buf, 1), read_bandwidth_gbs(buf, 2));
  }
  const KernelSet ks = use_ref ? reference_kernel_set() : select_kernel_set(cpu.capped(tier));
  std::printf("cpu: %s   kernel set: %s   %lldx%lld, 1 thread, per CPU-second\n", cpu.describe().c_str(),
              ks.name.c_str(), static_cast<long long>(n_rows), static_cast<long long>(n_cols));
  for (GgmlType t : types) bench_type(ks, t, n_rows, n_cols);
  return 0;
}
