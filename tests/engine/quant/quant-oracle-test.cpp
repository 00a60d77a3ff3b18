// Oracle tests against llama.cpp's files: the llama-tok512 ladder holds one f32 master and the
// same weights quantised by llama.cpp (llama-quantize --pure) to each format.
//  1. Dequantising every quantised tensor must reproduce the master within the format's error.
//  2. Re-quantising the master with our reference quantiser must give llama.cpp's bytes.
//     All quantisers we have are deterministic functions of the f32 input (no importance
//     matrix; llama-quantize --pure used none), so every one matches byte for byte: f16, bf16,
//     q8_0, q4_0, q4_1, q5_0, q5_1 and the searched k-quants q2_K, q3_K, q4_K, q5_K, q6_K.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "engine/gguf/gguf.h"
#include "engine/quant/quant.h"
#include "testdata.h"

namespace nurl {
namespace {

struct OracleCase {
  const char* file_type;  // suffix of llama-tok512-<TYPE>.gguf
  GgmlType type;
  // Bound on rms(dequant − master) / rms(master) over all quantised tensors. Derived from the
  // format, not measured: the master is Gaussian, and a uniform grid of step Δ has rms error
  // Δ/√12. With σ = 1: q8_0 Δ = amax/127 (amax of 32 normals ≈ 2.1) → 0.0048; q6_K (16 per
  // scale, 64 levels) Δ ≈ 1.9/32 → 0.017; q5 formats Δ ≈ 2.1/16 or range/31 → 0.038; q4 ≈ 0.076;
  // q3_K Δ ≈ 1.9/4 → 0.14; q2_K Δ ≈ range(≈3.5)/3 → 0.34. Bounds are 1.5× those; bf16 keeps 8
  // mantissa bits (relative rms 2^-8/√12 ≈ 0.0011 → 0.002); the master is f16-exact, so f16 is 0.
  double rel_rms_bound;
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const OracleCase& c, std::ostream* os) { *os << c.file_type; }

const OracleCase kCases[] = {
    {"F16", GgmlType::F16, 0.0},       {"BF16", GgmlType::BF16, 0.002},
    {"Q8_0", GgmlType::Q8_0, 0.0072},  {"Q4_0", GgmlType::Q4_0, 0.115},
    {"Q4_1", GgmlType::Q4_1, 0.115},   {"Q5_0", GgmlType::Q5_0, 0.057},
    {"Q5_1", GgmlType::Q5_1, 0.057},   {"Q2_K", GgmlType::Q2_K, 0.51},
    {"Q3_K", GgmlType::Q3_K, 0.21},   {"Q4_K", GgmlType::Q4_K, 0.115},
    {"Q5_K", GgmlType::Q5_K, 0.057},   {"Q6_K", GgmlType::Q6_K, 0.026},
};

class QuantOracle : public ::testing::TestWithParam<OracleCase> {};

std::string model_path(const char* t) { return test::testdata(std::string("models/llama-tok512-") + t + ".gguf"); }

TEST_P(QuantOracle, DequantMatchesMaster) {
  NURL_REQUIRE_TESTDATA();
  const OracleCase& c = GetParam();
  auto master = gguf::File::open(model_path("F32"));
  ASSERT_TRUE(master.ok()) << master.error().msg;
  auto file = gguf::File::open(model_path(c.file_type));
  ASSERT_TRUE(file.ok()) << file.error().msg;
  const QuantTraits* qt = quant_traits(c.type);
  ASSERT_NE(qt, nullptr);

  double err2 = 0, ref2 = 0, max_err = 0, max_ref = 0;
  int n_tensors = 0;
  for (const auto& t : file->tensors()) {
    const auto* m = master->tensor(t.name);
    ASSERT_NE(m, nullptr) << t.name;
    ASSERT_EQ(m->n_elements, t.n_elements) << t.name;
    if (t.type == GgmlType::F32) continue;  // 1-D norms stay f32
    ASSERT_EQ(t.type, c.type) << t.name << " (the ladder files are pure)";
    ASSERT_EQ(m->type, GgmlType::F32);
    std::vector<float> out(t.n_elements);
    qt->dequant_row(t.data, out.data(), int64_t(t.n_elements));
    const auto* ref = reinterpret_cast<const float*>(m->data);
    for (uint64_t i = 0; i < t.n_elements; ++i) {
      const double e = double(out[i]) - ref[i];
      err2 += e * e;
      ref2 += double(ref[i]) * ref[i];
      max_err = std::max(max_err, std::fabs(e));
      max_ref = std::max(max_ref, std::fabs(double(ref[i])));
    }
    ++n_tensors;
  }
  ASSERT_GT(n_tensors, 0);
  const double rel_rms = std::sqrt(err2 / ref2);
  std::printf("[oracle] %-5s tensors %2d  rel_rms %.6f (bound %.4f)  max_abs %.6f  (max |w| %.4f)\n",
              c.file_type, n_tensors, rel_rms, c.rel_rms_bound, max_err, max_ref);
  EXPECT_LE(rel_rms, c.rel_rms_bound) << c.file_type;
  if (c.rel_rms_bound == 0) {
    EXPECT_EQ(max_err, 0.0);
  }
}

TEST_P(QuantOracle, RequantiseMatchesLlamaCppBytes) {
  NURL_REQUIRE_TESTDATA();
  const OracleCase& c = GetParam();
  const QuantTraits* qt = quant_traits(c.type);
  ASSERT_NE(qt, nullptr);
  ASSERT_NE(qt->quantize_row, nullptr) << c.file_type << ": no reference quantiser";
  auto master = gguf::File::open(model_path("F32"));
  ASSERT_TRUE(master.ok()) << master.error().msg;
  auto file = gguf::File::open(model_path(c.file_type));
  ASSERT_TRUE(file.ok()) << file.error().msg;
  const TypeInfo& ti = type_info(c.type);

  uint64_t blocks = 0, diff_blocks = 0;
  for (const auto& t : file->tensors()) {
    if (t.type == GgmlType::F32) continue;
    const auto* m = master->tensor(t.name);
    ASSERT_NE(m, nullptr) << t.name;
    std::vector<uint8_t> out(t.n_bytes);
    const auto* src = reinterpret_cast<const float*>(m->data);
    // Row by row, as llama-quantize does.
    const int64_t ne0 = int64_t(t.ne[0]);
    const uint64_t rb = row_bytes(ti, uint64_t(ne0));
    for (uint64_t r = 0; r < t.n_rows(); ++r) qt->quantize_row(src + r * ne0, out.data() + r * rb, ne0);
    for (uint64_t off = 0; off < t.n_bytes; off += ti.block_bytes, ++blocks)
      if (std::memcmp(out.data() + off, t.data + off, ti.block_bytes) != 0) ++diff_blocks;
  }
  std::printf("[requant] %-5s blocks %llu  differing %llu\n", c.file_type, (unsigned long long)blocks,
              (unsigned long long)diff_blocks);
  EXPECT_EQ(diff_blocks, 0u) << c.file_type << ": bytes differ from llama.cpp's file";
}

INSTANTIATE_TEST_SUITE_P(Ladder, QuantOracle, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.file_type); });

}  // namespace
}  // namespace nurl
