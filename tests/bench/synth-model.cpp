// nurl-synth-model: writes a GGUF with the exact shape of a real model (Qwen2.5-0.5B, Llama-3.2-1B)
// and random weights in a chosen quant mix, for benchmarks: speed depends on shapes and types,
// not on values. The tokenizer (tokenizer.* keys) is copied from another GGUF, so prompts
// tokenize as with a real vocabulary; n_vocab follows that vocabulary.
//
// Quant mixes: f16 (every 2-D tensor F16: a master for llama-quantize, so a benchmark can use a
// file whose per-tensor types are llama.cpp's own choice), q8_0 (every 2-D tensor Q8_0) and q4_k_m, llama.cpp's standard Q4_K_M recipe:
// Q4_K everywhere except Q6_K for the output (or the tied token_embd) and for attn_v / ffn_down
// of "more bits" layers (the first and last eighth, and every third in between); rows whose
// length is not a multiple of 256 cannot hold K-quants and fall back (Q4_K → Q5_0, Q6_K → Q8_0).
//
// Rows are quantised from a pool of random rows per (type, row length) and reused, which keeps
// the tool fast on a small machine; the file still has every byte of a real one.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"
#include "engine/quant/quant.h"

namespace nurl {
namespace {

struct Shape {
  const char* name;
  const char* arch;
  int n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx;
  float rope_base, eps;
  bool qkv_bias;
  bool rope_freqs;  // llama-3 frequency factors tensor
};

constexpr Shape kShapes[] = {
    {"qwen2.5-0.5b", "qwen2", 896, 24, 14, 2, 4864, 32768, 1000000.0f, 1e-6f, true, false},
    {"llama-3.2-1b", "llama", 2048, 16, 32, 8, 8192, 131072, 500000.0f, 1e-5f, false, true},
};

struct TensorPlan {
  std::string name;
  GgmlType type;
  uint64_t ne0, ne1;  // ne1 = 1 for vectors
  float scale;        // weights ~ U(-scale, scale); vectors: 1 ± scale (norms) or ±scale (biases)
  bool is_norm = false;
};

bool more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

GgmlType k_fallback(GgmlType t, uint64_t ne0) {
  if (ne0 % 256 == 0) return t;
  switch (t) {
    case GgmlType::Q4_K: return GgmlType::Q5_0;
    case GgmlType::Q5_K: return GgmlType::Q5_1;
    case GgmlType::Q6_K: return GgmlType::Q8_0;
    default: return t;
  }
}

// role: "embd_tied", "output", "attn_v", "ffn_down", other.
GgmlType mix_type(const std::string& mix, const std::string& role, int layer, int n_layer, uint64_t ne0) {
  if (mix == "q8_0") return GgmlType::Q8_0;
  if (mix == "f16") return GgmlType::F16;
  GgmlType t = GgmlType::Q4_K;
  if (role == "output" || role == "embd_tied") t = GgmlType::Q6_K;
  else if ((role == "attn_v" || role == "ffn_down") && more_bits(layer, n_layer)) t = GgmlType::Q6_K;
  return k_fallback(t, ne0);
}

std::vector<TensorPlan> plan(const Shape& s, const std::string& mix, uint64_t n_vocab) {
  const uint64_t E = static_cast<uint64_t>(s.n_embd), F = static_cast<uint64_t>(s.n_ff);
  const uint64_t hd = E / static_cast<uint64_t>(s.n_head), KV = hd * static_cast<uint64_t>(s.n_head_kv);
  const float se = 1.0f / std::sqrt(static_cast<float>(E)) * 1.7f, sf = 1.0f / std::sqrt(static_cast<float>(F)) * 1.7f;
  std::vector<TensorPlan> t;
  auto mat = [&](std::string name, std::string role, int layer, uint64_t ne0, uint64_t ne1, float scale) {
    t.push_back({std::move(name), mix_type(mix, role, layer, s.n_layer, ne0), ne0, ne1, scale});
  };
  auto vec = [&](std::string name, uint64_t n, float scale, bool norm) {
    t.push_back({std::move(name), GgmlType::F32, n, 1, scale, norm});
  };
  // Tied output: token_embd doubles as the output matrix (both model shapes are tied).
  mat("token_embd.weight", "embd_tied", 0, E, n_vocab, 0.05f);
  vec("output_norm.weight", E, 0.1f, true);
  if (s.rope_freqs) vec("rope_freqs.weight", hd / 2, 0.0f, true);
  for (int l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    vec(p + "attn_norm.weight", E, 0.1f, true);
    mat(p + "attn_q.weight", "attn_q", l, E, E, se);
    mat(p + "attn_k.weight", "attn_k", l, E, KV, se);
    mat(p + "attn_v.weight", "attn_v", l, E, KV, se);
    if (s.qkv_bias) {
      vec(p + "attn_q.bias", E, 0.1f, false);
      vec(p + "attn_k.bias", KV, 0.1f, false);
      vec(p + "attn_v.bias", KV, 0.1f, false);
    }
    mat(p + "attn_output.weight", "attn_output", l, E, E, se);
    vec(p + "ffn_norm.weight", E, 0.1f, true);
    mat(p + "ffn_gate.weight", "ffn_gate", l, E, F, se);
    mat(p + "ffn_up.weight", "ffn_up", l, E, F, se);
    mat(p + "ffn_down.weight", "ffn_down", l, F, E, sf);
  }
  return t;
}

// Llama-3 rope frequency factors (factor 32, low/high frequency factors 1 and 4, original
// context 8192): 1 for short wavelengths, `factor` for long ones, smooth in between.
std::vector<float> llama3_rope_factors(int head_dim, float base) {
  const float factor = 32, lo = 1, hi = 4, orig = 8192;
  std::vector<float> f;
  for (int i = 0; i < head_dim / 2; ++i) {
    const float freq = std::pow(base, -2.0f * static_cast<float>(i) / static_cast<float>(head_dim));
    const float wavelen = 2 * static_cast<float>(M_PI) / freq;
    if (wavelen < orig / hi) f.push_back(1.0f);
    else if (wavelen > orig / lo) f.push_back(factor);
    else {
      const float smooth = (orig / wavelen - lo) / (hi - lo);
      f.push_back(1.0f / ((1 - smooth) / factor + smooth));
    }
  }
  return f;
}

class RowPool {
 public:
  static constexpr int kRows = 256;
  RowPool(GgmlType type, uint64_t ne0, float scale, uint32_t seed) {
    const auto& ti = type_info(type);
    row_bytes_ = row_bytes(ti, ne0);
    data_.resize(row_bytes_ * kRows);
    const QuantTraits* qt = quant_traits(type);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-scale, scale);
    std::vector<float> row(ne0);
    for (int r = 0; r < kRows; ++r) {
      for (auto& x : row) x = u(rng);
      qt->quantize_row(row.data(), data_.data() + row_bytes_ * static_cast<size_t>(r), static_cast<int64_t>(ne0));
    }
  }
  std::span<const uint8_t> row(uint64_t i) const {
    return {data_.data() + row_bytes_ * (i % kRows), row_bytes_};
  }

 private:
  size_t row_bytes_ = 0;
  std::vector<uint8_t> data_;
};

int usage() {
  std::fprintf(stderr,
               "usage: nurl-synth-model --shape qwen2.5-0.5b|llama-3.2-1b --mix q4_k_m|q8_0|f16 --vocab-from FILE.gguf "
               "--out PATH.gguf [--seed N]\n");
  return 2;
}

int run(int argc, char** argv) {
  std::string shape_name, mix, vocab_from, out;
  uint32_t seed = 5005;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--shape") shape_name = v;
    else if (k == "--mix") mix = v;
    else if (k == "--vocab-from") vocab_from = v;
    else if (k == "--out") out = v;
    else if (k == "--seed") seed = static_cast<uint32_t>(std::stoul(v));
    else return usage();
  }
  const Shape* shape = nullptr;
  for (const auto& s : kShapes)
    if (shape_name == s.name) shape = &s;
  if (!shape || (mix != "q4_k_m" && mix != "q8_0" && mix != "f16") || vocab_from.empty() || out.empty()) return usage();

  auto vf = gguf::File::open(vocab_from);
  if (!vf) {
    std::fprintf(stderr, "%s\n", vf.error().msg.c_str());
    return 1;
  }
  auto tokens = vf->get_array("tokenizer.ggml.tokens");
  if (!tokens) {
    std::fprintf(stderr, "%s: %s\n", vocab_from.c_str(), tokens.error().msg.c_str());
    return 1;
  }
  const uint64_t n_vocab = (*tokens)->items.size();

  const std::string a = shape->arch;
  const int hd = shape->n_embd / shape->n_head;
  gguf::Writer w;
  w.add_string("general.architecture", a);
  w.add_string("general.name", std::string("synthetic ") + shape->name + " " + mix);
  // llama.cpp ftype ids: MOSTLY_F16, MOSTLY_Q8_0, MOSTLY_Q4_K_M
  w.add_u32("general.file_type", mix == "f16" ? 1 : mix == "q8_0" ? 7 : 15);
  w.add_u32(a + ".context_length", static_cast<uint32_t>(shape->n_ctx));
  w.add_u32(a + ".embedding_length", static_cast<uint32_t>(shape->n_embd));
  w.add_u32(a + ".block_count", static_cast<uint32_t>(shape->n_layer));
  w.add_u32(a + ".feed_forward_length", static_cast<uint32_t>(shape->n_ff));
  w.add_u32(a + ".attention.head_count", static_cast<uint32_t>(shape->n_head));
  w.add_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(shape->n_head_kv));
  w.add_f32(a + ".rope.freq_base", shape->rope_base);
  w.add_f32(a + ".attention.layer_norm_rms_epsilon", shape->eps);
  if (a == "llama") {
    w.add_u32(a + ".rope.dimension_count", static_cast<uint32_t>(hd));
    w.add_u32(a + ".attention.key_length", static_cast<uint32_t>(hd));
    w.add_u32(a + ".attention.value_length", static_cast<uint32_t>(hd));
    w.add_u32(a + ".vocab_size", static_cast<uint32_t>(n_vocab));
  }
  for (const auto& kv : vf->metadata())
    if (kv.key.rfind("tokenizer.", 0) == 0) w.add(kv.key, kv.value);

  auto tensors = plan(*shape, mix, n_vocab);
  for (const auto& t : tensors) {
    if (t.ne1 == 1) w.add_tensor(t.name, t.type, {t.ne0});
    else w.add_tensor(t.name, t.type, {t.ne0, t.ne1});
  }
  if (auto r = w.begin(out); !r.ok()) {
    std::fprintf(stderr, "%s\n", r.error().msg.c_str());
    return 1;
  }

  std::map<std::tuple<GgmlType, uint64_t, float>, RowPool> pools;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const std::vector<float> rope_factors = llama3_rope_factors(hd, shape->rope_base);
  std::map<GgmlType, int> counts;
  for (size_t ti = 0; ti < tensors.size(); ++ti) {
    const auto& t = tensors[ti];
    counts[t.type]++;
    if (t.type == GgmlType::F32) {
      std::vector<float> v(t.ne0);
      if (t.name == "rope_freqs.weight") v = rope_factors;
      else
        for (auto& x : v) x = (t.is_norm ? 1.0f : 0.0f) + t.scale * u(rng);
      if (auto r = w.write(gguf::as_bytes(v)); !r.ok()) {
        std::fprintf(stderr, "%s\n", r.error().msg.c_str());
        return 1;
      }
      continue;
    }
    auto key = std::make_tuple(t.type, t.ne0, t.scale);
    auto it = pools.find(key);
    if (it == pools.end()) it = pools.emplace(key, RowPool(t.type, t.ne0, t.scale, seed + static_cast<uint32_t>(pools.size()))).first;
    // Pool rows are U(-scale, scale) with scale ~ 1.7/sqrt(n_in) (std 1/sqrt(n_in)), so
    // activations stay in range through all layers (no NaN/inf), as in a trained model.
    const uint64_t offset = static_cast<uint64_t>(ti) * 7919u;
    for (uint64_t r = 0; r < t.ne1; ++r) {
      if (auto res = w.write(it->second.row(r * 31 + offset)); !res.ok()) {
        std::fprintf(stderr, "%s\n", res.error().msg.c_str());
        return 1;
      }
    }
  }
  if (auto r = w.finish(); !r.ok()) {
    std::fprintf(stderr, "%s\n", r.error().msg.c_str());
    return 1;
  }
  std::printf("wrote %s: %s shape, %s mix, n_vocab %llu, tensors:", out.c_str(), shape->name, mix.c_str(),
              static_cast<unsigned long long>(n_vocab));
  for (auto [type, n] : counts) std::printf(" %s×%d", std::string(type_name(type)).c_str(), n);
  std::printf("\n");
  return 0;
}

}  // namespace
}  // namespace nurl

int main(int argc, char** argv) { return nurl::run(argc, argv); }
