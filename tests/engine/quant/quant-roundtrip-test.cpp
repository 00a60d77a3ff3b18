// Round trip of every reference quantiser on random Gaussian data: rms(dequant(quant(x)) − x)
// relative to rms(x) must stay below a bound derived from the format's grid (see the oracle test),
// plus the edge cases a quantiser must not break on (all-zero and constant blocks).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "engine/quant/quant.h"

namespace nurl {
namespace {

struct RoundTripCase {
  GgmlType type;
  double rel_rms_bound;  // 1.5 × the Δ/√12 estimate for N(0,1) blocks of the format
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const RoundTripCase& c, std::ostream* os) { *os << type_name(c.type); }

const RoundTripCase kRoundTrip[] = {
    {GgmlType::F16, 0.0005},  {GgmlType::BF16, 0.002},  {GgmlType::Q8_0, 0.0072}, {GgmlType::Q8_1, 0.0072},
    {GgmlType::Q4_0, 0.115},  {GgmlType::Q4_1, 0.115},  {GgmlType::Q5_0, 0.057},  {GgmlType::Q5_1, 0.057},
    {GgmlType::Q4_K, 0.115},  {GgmlType::Q5_K, 0.057},  {GgmlType::Q6_K, 0.026},
    {GgmlType::Q8_K, 0.0096},  // one scale per 256: amax of 256 normals ≈ 2.8σ → Δ/√12 ≈ 0.0064
};

class QuantRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

std::vector<float> roundtrip(const QuantTraits& qt, const std::vector<float>& x) {
  const TypeInfo& ti = type_info(qt.type);
  std::vector<uint8_t> q(row_bytes(ti, x.size()));
  std::vector<float> y(x.size());
  qt.quantize_row(x.data(), q.data(), int64_t(x.size()));
  qt.dequant_row(q.data(), y.data(), int64_t(x.size()));
  return y;
}

TEST_P(QuantRoundTrip, GaussianWithinBound) {
  const auto& c = GetParam();
  const QuantTraits* qt = quant_traits(c.type);
  ASSERT_NE(qt, nullptr);
  ASSERT_NE(qt->quantize_row, nullptr);
  std::mt19937 rng(1234);
  std::normal_distribution<float> dist(0.f, 0.7f);
  std::vector<float> x(256 * 64);
  for (auto& v : x) v = dist(rng);
  const auto y = roundtrip(*qt, x);
  double e2 = 0, r2 = 0, emax = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = double(y[i]) - x[i];
    e2 += e * e;
    r2 += double(x[i]) * x[i];
    emax = std::max(emax, std::fabs(e));
  }
  const double rel = std::sqrt(e2 / r2);
  std::printf("[roundtrip] %-5s rel_rms %.6f (bound %.4f) max_abs %.6f\n", std::string(type_name(c.type)).c_str(), rel,
              c.rel_rms_bound, emax);
  EXPECT_LE(rel, c.rel_rms_bound);
}

TEST_P(QuantRoundTrip, ZeroAndConstantBlocks) {
  const auto& c = GetParam();
  const QuantTraits* qt = quant_traits(c.type);
  ASSERT_NE(qt, nullptr);
  std::vector<float> zero(512, 0.f);
  for (float v : roundtrip(*qt, zero)) ASSERT_EQ(v, 0.f);
  std::vector<float> cst(512, 0.25f);  // exactly representable by every grid's extreme level
  for (float v : roundtrip(*qt, cst)) ASSERT_NEAR(v, 0.25f, 0.25 * 2 * c.rel_rms_bound + 1e-3);
}

INSTANTIATE_TEST_SUITE_P(All, QuantRoundTrip, ::testing::ValuesIn(kRoundTrip),
                         [](const auto& info) { return std::string(type_name(info.param.type)); });

TEST(QuantTraitsTable, GeometryAgreesWithBlockSizes) {
  // Every traits row is a type the container table knows, and vec_dot pairs with an activation
  // type that has a quantiser.
  for (const auto& qt : all_quant_traits()) {
    const TypeInfo& ti = type_info(qt.type);
    EXPECT_GT(ti.block_bytes, 0u) << ti.name;
    if (qt.vec_dot) {
      const QuantTraits* act = quant_traits(qt.vec_dot_type);
      ASSERT_NE(act, nullptr) << ti.name;
      EXPECT_NE(act->quantize_row, nullptr) << ti.name;
      const uint32_t a = ti.block_elems, b = type_info(qt.vec_dot_type).block_elems;
      EXPECT_EQ(std::max(a, b) % std::min(a, b), 0u) << ti.name;
    }
  }
  for (auto t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                 GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                 GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS})
    EXPECT_NE(quant_traits(t), nullptr) << type_name(t);
}

}  // namespace
}  // namespace nurl
