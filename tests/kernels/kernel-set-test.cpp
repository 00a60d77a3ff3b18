// Every kernel of the selected KernelSet against the scalar reference set, on random data, for
// every weight type: activation quantisers, gemm_rows over a row range and a chunk of tokens,
// and the f32/f16 helpers (attention is in attention-test.cpp). Tolerances are per op and
// relative to Σ|w·x| (float summation order is the only expected difference); each test prints
// its max difference.
#include "kernels/kernel-set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <random>
#include <vector>

#include "engine/quant/blocks.h"
#include "engine/quant/quant.h"
#include "kernels/cpu/packed-layout.h"
#include "kernels/cpu/x86/avx2-kernels.h"
#include "support/kernel-variants.h"

namespace nurl {
namespace {

using test::fast_sets;
using test::set_variants;
using test::SetVariant;

const GgmlType kWeightTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,   GgmlType::Q4_1,
                                 GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K,   GgmlType::Q3_K,
                                 GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};

std::string name_of(GgmlType t) {
  return std::string(type_name(t));
}

struct ParityCase {
  GgmlType type;
  SetVariant set;
};
// gtest prints a parameter in its test listing: the type and the set, not the struct's bytes.
void PrintTo(const ParityCase& c, std::ostream* os) {
  *os << name_of(c.type) << " on " << c.set.name;
}
std::vector<ParityCase> parity_cases() {
  std::vector<ParityCase> cases;
  for (const SetVariant& v : set_variants())
    for (GgmlType t : kWeightTypes) cases.push_back({t, v});
  return cases;
}

// n_rows × n_cols weights of type t: quantised Gaussians where a reference quantiser exists,
// otherwise random bytes with small positive f16 scales (every bit pattern is a valid block).
std::vector<uint8_t> make_weights(GgmlType t, int64_t n_rows, int64_t n_cols, std::mt19937& rng) {
  const TypeInfo& ti = type_info(t);
  const size_t rb = row_bytes(ti, uint64_t(n_cols));
  std::vector<uint8_t> w(rb * size_t(n_rows));
  const QuantTraits* qt = quant_traits(t);
  if (qt->quantize_row) {
    std::normal_distribution<float> nd(0.f, 0.05f);
    std::vector<float> row(static_cast<size_t>(n_cols));
    for (int64_t r = 0; r < n_rows; ++r) {
      for (auto& v : row) v = nd(rng);
      qt->quantize_row(row.data(), w.data() + size_t(r) * rb, n_cols);
    }
    return w;
  }
  for (auto& b : w) b = uint8_t(rng());
  std::vector<size_t> offs;
  if (t == GgmlType::Q2_K) offs = {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
  if (t == GgmlType::Q3_K) offs = {offsetof(BlockQ3_K, d)};
  if (t == GgmlType::IQ4_NL) offs = {offsetof(BlockIQ4_NL, d)};
  if (t == GgmlType::IQ4_XS) offs = {offsetof(BlockIQ4_XS, d)};
  std::uniform_real_distribution<float> u(0.0005f, 0.005f);
  for (size_t off = 0; off < w.size(); off += ti.block_bytes)
    for (size_t o : offs) {
      const f16_bits h = f32_to_fp16(u(rng));
      std::memcpy(&w[off + o], &h, 2);
    }
  return w;
}

size_t ref_act_row_bytes(const MatKernels* r, int64_t n) {
  KernelSet ks;
  ks.mat[size_t(GgmlType::F32)].act_type = r->act_type;
  return ks.act_row_bytes(GgmlType::F32, n);
}

class KernelParity : public ::testing::TestWithParam<ParityCase> {
 protected:
  KernelSet ref_ = reference_kernel_set();
  KernelSet fast_ = GetParam().set.make(GetParam().set.tier);
};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KernelParity);  // no SIMD tier on this CPU

TEST_P(KernelParity, ActivationQuantiserMatchesReference) {
  const GgmlType t = GetParam().type;
  const MatKernels* r = ref_.mat_for(t);
  const MatKernels* f = fast_.mat_for(t);
  ASSERT_NE(r, nullptr);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(r->act_type, f->act_type);
  const QuantTraits* act = quant_traits(r->act_type);
  ASSERT_NE(act, nullptr);
  std::mt19937 rng(7 + int(t));
  std::normal_distribution<float> nd(0.f, 2.f);
  const int64_t n = 4096;
  std::vector<float> x(n);
  for (auto& v : x) v = nd(rng);
  x[5] = 0.5f;  // exact ties for the 8-bit grids
  const size_t bytes = ref_.act_row_bytes(t, n);
  ASSERT_EQ(bytes, fast_.act_row_bytes(t, n));
  std::vector<uint8_t> qr(bytes), qf(bytes);
  r->quantize_act(x.data(), qr.data(), n);
  f->quantize_act(x.data(), qf.data(), n);
  std::vector<float> dr(n), df(n);
  act->dequant_row(qr.data(), dr.data(), n);
  act->dequant_row(qf.data(), df.data(), n);
  // One 8-bit level: half-to-even vs half-away rounding may differ on exact ties (q8_0).
  double maxdiff = 0, amax = 0;
  for (int64_t i = 0; i < n; ++i) {
    maxdiff = std::max(maxdiff, std::fabs(double(dr[i]) - df[i]));
    amax = std::max(amax, std::fabs(double(x[i])));
  }
  std::printf("[act] %-6s (%s→%s) maxdiff %.3g\n", name_of(t).c_str(), f->impl, name_of(f->act_type).c_str(), maxdiff);
  EXPECT_LE(maxdiff, amax / 127 * 1.01) << name_of(t);
  if (r->act_type == GgmlType::Q8_K || r->act_type == GgmlType::F16 || r->act_type == GgmlType::F32) {
    EXPECT_EQ(std::memcmp(qr.data(), qf.data(), bytes), 0) << "must be bit-identical for " << name_of(r->act_type);
  }
}

// A fast gemm of weight type t against the reference's, on random weights and activations: run(w,
// row_stride, row_begin, row_end, n_cols, xq, x_stride, n_tokens, y, y_stride) computes rows
// [row_begin, row_end) from the file-layout weights w. Token counts cover single-token
// generation, the few tokens of parallel sequences decoded together (2–4: one pass over each
// row), every leftover of the kernels' token tiles and more than one tile; rows
// [row_begin, row_end) of n_rows leave partial row tiles. Row lengths: 1024, and one that is not
// a multiple of eight blocks (kernels that take block scales eight at a time have a leftover).
// Rows outside the range must stay untouched. Returns the worst |Δ|/Σ|w·x|.
template <class Run>
double compare_gemm(GgmlType t, const MatKernels* r, const char* impl, int64_t n_rows, int64_t row_begin,
                    int64_t row_end, std::initializer_list<int> token_counts, std::mt19937& rng, Run&& run) {
  const int64_t block = int64_t(type_info(t).block_elems);
  const int64_t odd_cols = block == 1 ? 1000 : block * (block == 32 ? 35 : 5);
  double worst = 0;
  for (const int64_t n_cols : {int64_t(1024), odd_cols})
  for (const int n_tokens : token_counts) {
    const auto w = make_weights(t, n_rows, n_cols, rng);
    const size_t rb = row_bytes(type_info(t), uint64_t(n_cols));
    // Activations quantised once by the reference, so the gemm is compared on identical inputs.
    std::normal_distribution<float> nd(0.f, 1.f);
    const size_t xs = ref_act_row_bytes(r, n_cols) + 64;  // a stride larger than the row
    std::vector<uint8_t> xq(xs * n_tokens);
    std::vector<float> xf(size_t(n_cols) * n_tokens);
    for (auto& v : xf) v = nd(rng);
    for (int k = 0; k < n_tokens; ++k) r->quantize_act(xf.data() + size_t(k) * n_cols, xq.data() + k * xs, n_cols);

    const int64_t y_stride = n_rows + 3;
    const float kUntouched = -12345.f;
    std::vector<float> yr(size_t(y_stride) * n_tokens, kUntouched), yf(yr);
    r->gemm_rows(w.data(), rb, row_begin, row_end, n_cols, xq.data(), xs, n_tokens, yr.data(), y_stride);
    run(w.data(), rb, row_begin, row_end, n_cols, xq.data(), xs, n_tokens, yf.data(), y_stride);

    // Scale for the tolerance: Σ|w·x| per (row, token) from dequantised rows.
    const QuantTraits* wt = quant_traits(t);
    const QuantTraits* at = quant_traits(r->act_type);
    std::vector<float> wd(n_cols), xd(n_cols);
    for (int k = 0; k < n_tokens; ++k) {
      at->dequant_row(xq.data() + k * xs, xd.data(), n_cols);
      for (int64_t row = 0; row < y_stride; ++row) {
        const size_t at_ = size_t(k) * y_stride + row;
        if (row < row_begin || row >= row_end) {
          EXPECT_EQ(yf[at_], kUntouched) << "row " << row << " outside the range was written";
          continue;
        }
        wt->dequant_row(w.data() + size_t(row) * rb, wd.data(), n_cols);
        double mag = 0;
        for (int64_t i = 0; i < n_cols; ++i) mag += std::fabs(double(wd[i]) * xd[i]);
        const double rel = std::fabs(double(yr[at_]) - yf[at_]) / (mag + 1e-30);
        worst = std::max(worst, rel);
        if (rel > 2e-5) {
          ADD_FAILURE() << name_of(t) << " n_cols " << n_cols << " n_tokens " << n_tokens << " row " << row
                        << " token " << k << ": ref " << yr[at_] << " " << impl << " " << yf[at_];
          return worst;
        }
      }
    }
  }
  return worst;
}

TEST_P(KernelParity, GemmRowsMatchesReference) {
  const GgmlType t = GetParam().type;
  const MatKernels* r = ref_.mat_for(t);
  const MatKernels* f = fast_.mat_for(t);
  ASSERT_NE(r, nullptr);
  ASSERT_NE(f, nullptr);
  std::mt19937 rng(100 + int(t));
  const double worst = compare_gemm(t, r, f->impl, 37, 3, 35, {1, 2, 3, 4, 5, 6, 7, 9, 11, 70}, rng,
                                    [&](auto... a) { f->gemm_rows(a...); });
  std::printf("[gemm] %-6s %-4s maxdiff |Δ|/Σ|wx| %.3g\n", name_of(t).c_str(), f->impl, worst);
}

// The gemm over the interleaved layout (packed-layout.h), for the sets and types that have one:
// the file's rows packed into groups, then row ranges that start at a group and end inside one
// (the last group of 37 rows is partial: its missing rows are zeros and must not be written),
// token counts up to the kernel's max_tokens.
class PackedParity : public ::testing::TestWithParam<ParityCase> {
 protected:
  KernelSet ref_ = reference_kernel_set();
  KernelSet fast_ = GetParam().set.make(GetParam().set.tier);
};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PackedParity);  // no packed layouts on this CPU

std::vector<ParityCase> packed_cases() {
  std::vector<ParityCase> cases;
  for (const ParityCase& c : parity_cases())
    if (c.set.make(c.set.tier).mat_for(c.type)->packed.rows > 0) cases.push_back(c);
  return cases;
}

TEST_P(PackedParity, GemmMatchesReference) {
  const GgmlType t = GetParam().type;
  const MatKernels* r = ref_.mat_for(t);
  const MatKernels* f = fast_.mat_for(t);
  ASSERT_TRUE(r && f && f->packed.rows > 0 && packed::has_layout(t));
  const int R = f->packed.rows;
  const int64_t n_rows = 2 * R + 5;
  std::mt19937 rng(200 + int(t));
  const auto run = [&](const uint8_t* w, size_t rb, int64_t row_begin, int64_t row_end, int64_t n_cols,
                       const uint8_t* xq, size_t xs, int n_tokens, float* y, int64_t ys) {
    const int64_t n_groups = (n_rows + R - 1) / R;
    const size_t gb = packed::group_bytes(t, R, n_cols);
    std::vector<uint8_t> p(gb * size_t(n_groups) + 64);
    uint8_t* p64 = p.data() + (64 - reinterpret_cast<uintptr_t>(p.data()) % 64) % 64;
    packed::pack(t, R, w, rb, n_rows, n_cols, 0, n_groups, p64);
    for (int t0 = 0; t0 < n_tokens; t0 += f->packed.max_tokens)  // calls of at most max_tokens, as matmul makes them
      f->packed.gemm(p64, gb, row_begin, row_end, n_cols, xq + size_t(t0) * xs, xs,
                     std::min(f->packed.max_tokens, n_tokens - t0), y + t0 * ys, ys);
  };
  double worst = compare_gemm(t, r, f->impl, n_rows, 0, n_rows, {1, 2, 3, 4, 7, 8, 9, 16, 33, 70}, rng, run);
  worst = std::max(worst, compare_gemm(t, r, f->impl, n_rows, R, n_rows - 3, {1, 5, 13}, rng, run));
  std::printf("[packed] %-6s %-4s %d rows a group, maxdiff |Δ|/Σ|wx| %.3g\n", name_of(t).c_str(), GetParam().set.name.c_str(), R, worst);
}

// Packing is portable code (any CPU): every type with a layout, for group sizes 8 and 16 and a
// partial last group, unpacks row by row to the file's bytes exactly (row lookups in a packed
// tied embedding read rows this way), and the padding rows of the last group are zero weights.
TEST(PackedLayout, RowsUnpackToTheFileBytes) {
  int n_types = 0;
  for (GgmlType t : kWeightTypes) {
    if (!packed::has_layout(t)) continue;
    ++n_types;
    std::mt19937 rng(300 + int(t));
    const int64_t n_cols = int64_t(type_info(t).block_elems) * 7, n_rows = 21;
    const auto w = make_weights(t, n_rows, n_cols, rng);
    const size_t rb = row_bytes(type_info(t), uint64_t(n_cols));
    for (int R : {8, 16}) {
      const int64_t n_groups = (n_rows + R - 1) / R;
      const size_t gb = packed::group_bytes(t, R, n_cols);
      EXPECT_EQ(packed::unit_bytes(t, R) % size_t(R), 0u);
      EXPECT_LE(gb, rb * size_t(R) * 103 / 100) << name_of(t) << ": a packed group is about the file's size";
      std::vector<uint8_t> p(gb * size_t(n_groups), 0xa5);
      packed::pack(t, R, w.data(), rb, n_rows, n_cols, 0, n_groups, p.data());
      std::vector<uint8_t> row(rb);
      for (int64_t r = 0; r < n_rows; ++r) {
        packed::unpack_row(t, R, p.data(), n_cols, r, row.data());
        ASSERT_EQ(std::memcmp(row.data(), w.data() + size_t(r) * rb, rb), 0) << name_of(t) << " R=" << R << " row " << r;
      }
      std::vector<float> values(static_cast<size_t>(n_cols));
      for (int64_t r = n_rows; r < n_groups * R; ++r) {
        packed::unpack_row(t, R, p.data(), n_cols, r, row.data());
        quant_traits(t)->dequant_row(row.data(), values.data(), n_cols);
        for (float v : values) ASSERT_EQ(v, 0.f) << name_of(t) << " R=" << R << " padding row " << r;
      }
    }
  }
  EXPECT_EQ(n_types, 9);
}

INSTANTIATE_TEST_SUITE_P(PackedTypes, PackedParity, ::testing::ValuesIn(packed_cases()),
                         [](const auto& info) {
                           return name_of(info.param.type) + "_" + info.param.set.name;
                         });

INSTANTIATE_TEST_SUITE_P(AllWeightTypes, KernelParity, ::testing::ValuesIn(parity_cases()),
                         [](const auto& info) {
                           return name_of(info.param.type) + "_" + info.param.set.name;
                         });

TEST(KernelSet, SelectedSetCoversEveryReferenceType) {
  const KernelSet ref = reference_kernel_set();
  const KernelSet fast = select_kernel_set(detect_cpu_features());
  std::printf("[kernels] cpu %s → set %s\n", detect_cpu_features().describe().c_str(), fast.name.c_str());
  for (GgmlType t : kWeightTypes) EXPECT_TRUE(ref.supports(t)) << name_of(t);
  for (const KernelSet& ks : fast_sets())
    for (GgmlType t : kWeightTypes) EXPECT_TRUE(ks.supports(t)) << ks.name << " " << name_of(t);
  EXPECT_FALSE(ref.supports(GgmlType::IQ2_XXS));
  EXPECT_FALSE(ref.supports(GgmlType::Q8_K));  // an activation format, never a weight here
}

// A CPU with every feature has every tier; capping hides exactly the features above the tier,
// and select_kernel_set follows (a capped CPU never gets a higher tier's kernels).
TEST(CpuFeatures, CappedHidesHigherTiers) {
  CpuFeatures all;
  all.avx2 = all.fma = all.f16c = all.avxvnni = true;
  all.avx512f = all.avx512bw = all.avx512vl = all.avx512vnni = true;
  for (CpuTier t : kCpuTiers) EXPECT_TRUE(all.has(t)) << tier_name(t);
  for (CpuTier cap : kCpuTiers) {
    const CpuFeatures c = all.capped(cap);
    for (CpuTier t : kCpuTiers) EXPECT_EQ(c.has(t), t <= cap) << "capped " << tier_name(cap) << ", " << tier_name(t);
  }
  CpuFeatures zen4 = all;  // AVX512-VNNI without the VEX form: avx512, not avx_vnni
  zen4.avxvnni = false;
  EXPECT_TRUE(zen4.has(CpuTier::avx512));
  EXPECT_FALSE(zen4.has(CpuTier::avx_vnni));
  EXPECT_EQ(select_kernel_set(CpuFeatures{}).name, "ref");
  EXPECT_EQ(select_kernel_set(all.capped(CpuTier::avx2)).name, "avx2");
}

// Each tier builds its own set (a forced lower tier is not the top one renamed).
TEST(KernelSet, TiersAreDistinct) {
  for (const SetVariant& v : set_variants()) {
    const KernelSet ks = v.make(v.tier);
    EXPECT_EQ(ks.name, v.name);
    std::printf("[kernels] %s: q8_0 %s, q4_K %s\n", ks.name.c_str(), ks.mat_for(GgmlType::Q8_0)->impl,
                ks.mat_for(GgmlType::Q4_K)->impl);
  }
}

// f32 → f16 rows (the KV cache store): the same rounding as the scalar conversion.
TEST(KernelSet, F16RowsMatchReference) {
  const KernelSet r = reference_kernel_set();
  for (const KernelSet& f : fast_sets()) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int64_t n : {1, 7, 8, 64, 133}) {
    std::vector<float> a(n);
    std::vector<uint16_t> h(n), h2(n);
    for (auto& x : a) x = nd(rng);
    r.f32_to_f16_row(a.data(), h.data(), n);
    f.f32_to_f16_row(a.data(), h2.data(), n);
    EXPECT_EQ(h, h2) << f.name << ": f32→f16 must round the same way, n=" << n;
  }
  }
}

// silu(g)·u of both sets against the definition in double: ordinary gate values, the tails where
// e^−g over- or underflows in float, zero, and lengths around the 8-wide steps.
TEST(KernelSet, SiluMulMatchesDefinition) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 4.f);
  std::vector<KernelSet> sets = fast_sets();
  sets.push_back(reference_kernel_set());
  for (const KernelSet& ks : sets) {
    for (int64_t n : {1, 7, 8, 29, 4864}) {
      std::vector<float> g(n), u(n);
      for (auto& x : g) x = nd(rng);
      for (auto& x : u) x = nd(rng);
      const float tails[] = {0.f, -0.f, -87.5f, -88.5f, -100.f, -1e30f, 88.5f, 100.f, 1e30f, 1e-30f};
      for (size_t k = 0; k < std::size(tails) && k < size_t(n); ++k) g[size_t(k) * size_t(n) / std::size(tails)] = tails[k];
      std::vector<float> out(g);
      ks.silu_mul(out.data(), u.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double x = g[i], want = x / (1.0 + std::exp(-x)) * u[i];
        ASSERT_NEAR(out[i], want, 2e-6 * std::fabs(want) + 1e-30)
            << ks.name << " n=" << n << " g=" << g[i] << " u=" << u[i];
      }
    }
  }
}

}  // namespace
}  // namespace nurl
