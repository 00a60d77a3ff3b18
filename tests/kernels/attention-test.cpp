// Attention over blocks of query tokens (kernels/attention.h: causal inside the block, optional
// sliding window) against a direct double-precision evaluation of the definition, for the
// reference kernel and every SIMD tier this CPU runs. Shapes are chosen to leave remainders
// everywhere: head sizes 64/80/128/256 (and 40, which SIMD kernels hand to the reference), query
// heads per KV head 1/2/4/7, token counts that are not multiples of the kernels' row blocks, key
// counts that are not multiples of their key blocks, f16 and f32 caches, soft-capping and windows
// down to a single key; and single tokens (decode) over key counts around that kernel's steps.
// Each case also checks that nothing outside the output rows is written.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "engine/quant/blocks.h"
#include "kernels/kernel-set.h"
#include "support/kernel-variants.h"
#include "support/param-name.h"

namespace nurl {
namespace {

struct Shape {
  int hd, gqa, n_tok, past;  // head size, query heads per KV head, query tokens, keys before them
  bool f16 = true;
  float softcap = 0.0f;
  int window = 0;
};

struct AttnCase {
  std::string set;
  KernelSet (*make)(CpuTier);
  CpuTier tier;
  Shape shape;
};

KernelSet reference_set(CpuTier) {
  return reference_kernel_set();
}

std::vector<Shape> shapes() {
  std::vector<Shape> v;
  for (int hd : {64, 80, 128, 256})
    for (int gqa : {1, 2, 4, 7}) v.push_back({hd, gqa, 37, 203});
  for (int hd : {64, 128})
    for (int gqa : {2, 7}) {
      v.push_back({hd, gqa, 37, 203, false});
      v.push_back({hd, gqa, 37, 203, true, 20.0f});
      v.push_back({hd, gqa, 37, 203, true, 0.0f, 50});
      v.push_back({hd, gqa, 19, 40, true, 0.0f, 1});
      v.push_back({hd, gqa, 37, 203, false, 20.0f, 100});
      v.push_back({hd, gqa, 2, 0});
      v.push_back({hd, gqa, 37, 0});
      v.push_back({hd, gqa, 130, 70});
    }
  v.push_back({40, 2, 9, 20});
  // Sliding-window layers as gemma3 has them (head size 256, window 64, blocks crossing it).
  for (int gqa : {1, 2, 4})
    for (int past : {0, 32, 118}) v.push_back({256, gqa, 32, past, true, 0.0f, 64});
  v.push_back({256, 4, 7, 63, true, 0.0f, 64});
  // One token (decode): key counts around the single-token kernel's 8-key steps and 32-row chunks.
  for (int hd : {64, 96, 256, 40})
    for (int past : {0, 32, 99})
      for (int gqa : {1, 7}) v.push_back({hd, gqa, 1, past});
  v.push_back({128, 3, 1, 99, false});
  v.push_back({128, 3, 1, 99, true, 20.0f});
  v.push_back({64, 3, 1, 99, true, 0.0f, 50});
  return v;
}

std::vector<AttnCase> cases() {
  std::vector<AttnCase> v;
  std::vector<test::SetVariant> sets = {{"ref", reference_set, CpuTier::scalar}};
  for (const test::SetVariant& s : test::set_variants(false)) sets.push_back(s);
  for (const test::SetVariant& s : sets)
    for (const Shape& sh : shapes()) v.push_back({s.name, s.make, s.tier, sh});
  return v;
}

std::string case_name(const AttnCase& c) {
  const Shape& s = c.shape;
  std::string n = c.set + "_hd" + std::to_string(s.hd) + "_gqa" + std::to_string(s.gqa) + "_tok" +
                  std::to_string(s.n_tok) + "_past" + std::to_string(s.past) + (s.f16 ? "_f16" : "_f32");
  if (s.softcap > 0) n += "_softcap";
  if (s.window > 0) n += "_window" + std::to_string(s.window);
  return test::case_name(n);
}

class AttentionBlock : public ::testing::TestWithParam<AttnCase> {};

TEST_P(AttentionBlock, MatchesDefinition) {
  const AttnCase& c = GetParam();
  const Shape& sh = c.shape;
  const KernelSet ks = c.make(c.tier);
  const int hd = sh.hd, hdv = sh.hd, n_q = sh.gqa, n_tok = sh.n_tok, n_kv = sh.past + sh.n_tok;
  std::mt19937 rng(uint32_t(hd * 131 + n_q * 17 + n_tok + sh.past + sh.window));
  std::normal_distribution<float> nd(0.f, 1.f);

  // The cache: rows of a wider cache (other KV heads beside this one), as in the engine.
  const size_t elem = sh.f16 ? 2 : 4;
  const size_t stride = (2 * size_t(hd) + 8) * elem;
  std::vector<uint8_t> k(stride * n_kv), v(stride * n_kv);
  std::vector<double> kd(size_t(n_kv) * hd), vd(size_t(n_kv) * hdv);
  auto put = [&](std::vector<uint8_t>& buf, std::vector<double>& exact, int p, int d, int width) {
    const float x = nd(rng);
    if (sh.f16) {
      const f16_bits h = f32_to_fp16(x);
      std::memcpy(&buf[size_t(p) * stride + 2 * size_t(d)], &h, 2);
      exact[size_t(p) * width + d] = fp16_to_f32(h);
    } else {
      std::memcpy(&buf[size_t(p) * stride + 4 * size_t(d)], &x, 4);
      exact[size_t(p) * width + d] = x;
    }
  };
  for (int p = 0; p < n_kv; ++p) {
    for (int d = 0; d < hd; ++d) put(k, kd, p, d, hd);
    for (int d = 0; d < hdv; ++d) put(v, vd, p, d, hdv);
  }
  // Queries and outputs laid out as the engine's rows: heads side by side in a token's row, with
  // gaps between heads and between tokens that must stay untouched.
  const int64_t q_stride = hd + 3, q_tok_stride = n_q * q_stride + 11;
  const int64_t out_stride = hdv + 3, out_tok_stride = n_q * out_stride + 5;
  std::vector<float> q(size_t(n_tok) * q_tok_stride);
  for (auto& x : q) x = 2.0f * nd(rng);  // sharper softmax: the running max moves between key blocks
  const float kUntouched = -7.0f;
  std::vector<float> out(size_t(n_tok) * out_tok_stride, kUntouched);

  AttnArgs a;
  a.f16 = sh.f16;
  a.q = q.data();
  a.q_stride = q_stride;
  a.q_tok_stride = q_tok_stride;
  a.k = k.data();
  a.k_stride = stride;
  a.v = v.data();
  a.v_stride = stride;
  a.n_q = n_q;
  a.n_kv = n_kv;
  a.n_tok = n_tok;
  a.window = sh.window;
  a.head_dim = hd;
  a.head_dim_v = hdv;
  a.scale = 1.0f / std::sqrt(float(hd));
  a.softcap = sh.softcap;
  a.out = out.data();
  a.out_stride = out_stride;
  a.out_tok_stride = out_tok_stride;
  ks.attend(a);

  double worst = 0;
  std::vector<bool> written(out.size(), false);
  for (int t = 0; t < n_tok; ++t) {
    // Causal: token t is at key past + t and sees keys up to it, within the window.
    const int end = sh.past + t + 1, first = sh.window > 0 ? std::max(0, end - sh.window) : 0;
    for (int g = 0; g < n_q; ++g) {
      const float* qg = q.data() + size_t(t) * q_tok_stride + size_t(g) * q_stride;
      std::vector<double> s(static_cast<size_t>(n_kv), 0.0);
      double mx = -INFINITY;
      for (int p = first; p < end; ++p) {
        double dot = 0;
        for (int d = 0; d < hd; ++d)
          dot += double(sh.f16 ? fp16_to_f32(f32_to_fp16(qg[d])) : qg[d]) * kd[size_t(p) * hd + d];
        double sc = dot * a.scale;
        if (sh.softcap > 0) sc = sh.softcap * std::tanh(sc / sh.softcap);
        s[size_t(p)] = sc;
        mx = std::max(mx, sc);
      }
      double sum = 0;
      for (int p = first; p < end; ++p) sum += (s[size_t(p)] = std::exp(s[size_t(p)] - mx));
      const size_t row = size_t(t) * out_tok_stride + size_t(g) * out_stride;
      for (int d = 0; d < hdv; ++d) {
        double want = 0;
        for (int p = first; p < end; ++p) want += s[size_t(p)] * vd[size_t(p) * hdv + d];
        want /= sum;
        const double err = std::fabs(out[row + d] - want);
        worst = std::max(worst, err);
        ASSERT_LE(err, 2e-5) << "token " << t << " head " << g << " dim " << d << ": got " << out[row + d] << ", want "
                             << want;
        written[row + d] = true;
      }
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!written[i]) {
      ASSERT_EQ(out[i], kUntouched) << "wrote outside the output rows at float " << i;
    }
  }
  std::printf("[attention] %s max |Δ| vs double %.3g\n", case_name(c).c_str(), worst);
}

void PrintTo(const AttnCase& c, std::ostream* os) {
  *os << case_name(c);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionBlock, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return case_name(info.param); });

}  // namespace
}  // namespace nurl
