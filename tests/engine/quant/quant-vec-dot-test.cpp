// The integer dot products (weight row × quantised activation row) against the plain float dot
// of both rows dequantised: the two differ only by float rounding of the per-block scale
// products, so the bound is relative to Σ|x·y|. Weights of types without a reference quantiser
// are random bytes with sane scales (every bit pattern is a valid block). With q8_1 activations
// (q4_1, q5_1) the weight offset m multiplies q8_1's s = d·Σq, which the format stores as f16:
// that term carries an extra relative error of up to 2^-11 per block, added to the bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "engine/quant/blocks.h"
#include "engine/quant/quant.h"
#include "testdata.h"

namespace nurl {
// gtest prints a parameter through this (its bytes otherwise); found by argument-dependent lookup
// in GgmlType's namespace, so not in the unnamed one.
static void PrintTo(GgmlType t, std::ostream* os) { *os << type_name(t); }

namespace {

// Random bytes for n elements of type t, with the f16 scale fields set to small positive values.
std::vector<uint8_t> random_weights(GgmlType t, int64_t n, std::mt19937& rng) {
  const TypeInfo& ti = type_info(t);
  std::vector<uint8_t> w(row_bytes(ti, uint64_t(n)));
  for (auto& b : w) b = uint8_t(rng());
  std::vector<size_t> scale_offsets;
  switch (t) {
    case GgmlType::Q2_K: scale_offsets = {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)}; break;
    case GgmlType::Q3_K: scale_offsets = {offsetof(BlockQ3_K, d)}; break;
    case GgmlType::IQ4_NL: scale_offsets = {offsetof(BlockIQ4_NL, d)}; break;
    case GgmlType::IQ4_XS: scale_offsets = {offsetof(BlockIQ4_XS, d)}; break;
    default: break;
  }
  std::uniform_real_distribution<float> u(0.001f, 0.01f);
  for (size_t off = 0; off < w.size(); off += ti.block_bytes)
    for (size_t so : scale_offsets) {
      const f16_bits h = f32_to_fp16(u(rng));
      std::memcpy(&w[off + so], &h, 2);
    }
  return w;
}

std::vector<uint8_t> quantise(GgmlType t, const std::vector<float>& x) {
  const QuantTraits* qt = quant_traits(t);
  std::vector<uint8_t> q(row_bytes(type_info(t), x.size()));
  qt->quantize_row(x.data(), q.data(), int64_t(x.size()));
  return q;
}

class QuantVecDot : public ::testing::TestWithParam<GgmlType> {};

TEST_P(QuantVecDot, MatchesDequantisedFloatDot) {
  const GgmlType t = GetParam();
  const QuantTraits* qt = quant_traits(t);
  ASSERT_NE(qt, nullptr);
  ASSERT_NE(qt->vec_dot, nullptr);
  const QuantTraits* act = quant_traits(qt->vec_dot_type);
  ASSERT_NE(act, nullptr);
  std::mt19937 rng(42 + int(t));
  std::normal_distribution<float> nd(0.f, 1.f);
  const int64_t n = 1024;
  double worst = 0;
  for (int trial = 0; trial < 8; ++trial) {
    std::vector<float> xf(n), yf(n);
    for (auto& v : xf) v = nd(rng) * 0.05f;
    for (auto& v : yf) v = nd(rng) * (trial % 2 ? 3.f : 0.2f);
    const auto x = qt->quantize_row ? quantise(t, xf) : random_weights(t, n, rng);
    const auto y = quantise(qt->vec_dot_type, yf);
    std::vector<float> xd(n), yd(n);
    qt->dequant_row(x.data(), xd.data(), n);
    act->dequant_row(y.data(), yd.data(), n);
    double exact = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      exact += double(xd[i]) * yd[i];
      mag += std::fabs(double(xd[i]) * yd[i]);
    }
    double slack = 0;
    if (qt->vec_dot_type == GgmlType::Q8_1) {
      const auto* yb = reinterpret_cast<const BlockQ8_1*>(y.data());
      const size_t wb = type_info(t).block_bytes;
      for (int64_t b = 0; b < n / kQK; ++b) {
        f16_bits m;  // q4_1 and q5_1 both keep m right after d
        std::memcpy(&m, x.data() + size_t(b) * wb + offsetof(BlockQ4_1, m), 2);
        static_assert(offsetof(BlockQ4_1, m) == offsetof(BlockQ5_1, m));
        slack += std::fabs(double(fp16_to_f32(m)) * fp16_to_f32(yb[b].s)) * std::ldexp(1.0, -11);
      }
    }
    const double got = qt->vec_dot(n, x.data(), y.data());
    const double rel = std::max(0.0, std::fabs(got - exact) - slack) / mag;
    worst = std::max(worst, rel);
    EXPECT_LE(rel, 1e-5) << type_name(t) << " trial " << trial << ": got " << got << " want " << exact;
  }
  std::printf("[vec_dot] %-6s worst |Δ|/Σ|xy| %.3g\n", std::string(type_name(t)).c_str(), worst);
}

INSTANTIATE_TEST_SUITE_P(AllWeightTypes, QuantVecDot,
                         ::testing::Values(GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1,
                                           GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K,
                                           GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
                                           GgmlType::IQ4_NL, GgmlType::IQ4_XS),
                         [](const auto& info) { return std::string(type_name(info.param)); });

}  // namespace
}  // namespace nurl
