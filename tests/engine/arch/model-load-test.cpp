// Model::load checks: each broken file (a tensor missing, a wrong shape, a wrong type for a norm,
// an unknown architecture, a missing key) is refused with an error naming the tensor or key.
// The broken files are real test models rewritten in memory with one thing changed.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/gguf/gguf-writer.h"
#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "testdata.h"

namespace nurl {
namespace {

struct Edit {
  std::string name;
  std::function<void(gguf::Writer&, const gguf::File&)> build;  // writes all metadata and tensors
  std::string needle;                                           // must appear in the error
};

// Copies src's metadata (optionally skipping/replacing a key) and tensors (optionally skipping one
// or declaring one with another shape/type, data taken from a same-sized buffer).
void copy(gguf::Writer& w, const gguf::File& src, const std::string& skip_key, const std::string& skip_tensor,
          std::vector<std::vector<uint8_t>>* keep = nullptr, const std::string& reshape = "",
          std::vector<uint64_t> new_ne = {}, GgmlType new_type = GgmlType::F32) {
  for (const auto& kv : src.metadata())
    if (kv.key != skip_key) w.add(kv.key, kv.value);
  for (const auto& t : src.tensors()) {
    if (t.name == skip_tensor) continue;
    if (t.name == reshape) {
      uint64_t n = 1;
      for (uint64_t e : new_ne) n *= e;
      keep->emplace_back(row_bytes(type_info(new_type), new_ne[0]) * (n / new_ne[0]), 0);
      w.add_tensor(t.name, new_type, std::span<const uint64_t>(new_ne), keep->back());
      continue;
    }
    w.add_tensor(t.name, t.type, std::span<const uint64_t>(t.ne.data(), t.n_dims), t.bytes());
  }
}

TEST(ModelLoad, BrokenFilesNameWhatIsWrong) {
  NURL_REQUIRE_TESTDATA();
  auto src = gguf::File::open(test::testdata("models/qwen2-F16-embQ4_0.gguf"));
  ASSERT_TRUE(src.ok());
  const gguf::File& f = *src;
  std::vector<std::vector<uint8_t>> keep;
  const Edit edits[] = {
      {"missing tensor", [&](gguf::Writer& w, const gguf::File& s) { copy(w, s, "", "blk.1.ffn_down.weight"); },
       "blk.1.ffn_down.weight is missing"},
      {"missing bias", [&](gguf::Writer& w, const gguf::File& s) { copy(w, s, "", "blk.0.attn_k.bias"); },
       "blk.0.attn_k.bias is missing"},
      {"wrong shape",
       [&](gguf::Writer& w, const gguf::File& s) {
         copy(w, s, "", "", &keep, "blk.0.attn_q.weight", {128, 96}, GgmlType::F16);
       },
       "blk.0.attn_q.weight has shape [128, 96], expected [128, 128]"},
      {"norm not f32",
       [&](gguf::Writer& w, const gguf::File& s) {
         copy(w, s, "", "", &keep, "blk.1.attn_norm.weight", {128}, GgmlType::F16);
       },
       "blk.1.attn_norm.weight: type f16"},
      {"missing key", [&](gguf::Writer& w, const gguf::File& s) { copy(w, s, "qwen2.block_count", ""); },
       "qwen2.block_count"},
      {"unknown arch",
       [&](gguf::Writer& w, const gguf::File& s) {
         copy(w, s, "general.architecture", "");
         w.add_string("general.architecture", "mamba");
       },
       "\"mamba\" is not supported"},
  };
  for (const Edit& e : edits) {
    SCOPED_TRACE(e.name);
    gguf::Writer w;
    e.build(w, f);
    auto bytes = w.write_to_memory();
    ASSERT_TRUE(bytes.ok()) << bytes.error().msg;
    auto parsed = gguf::File::parse(*bytes);
    ASSERT_TRUE(parsed.ok()) << parsed.error().msg;
    auto m = Model::from_file(std::move(parsed).value());
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.error().msg.find(e.needle), std::string::npos) << m.error().msg;
  }
}

TEST(ModelLoad, ConfigFromMetadata) {
  NURL_REQUIRE_TESTDATA();
  struct Want {
    const char* file;
    int n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab;
    RopeStyle rope;
    bool tied;
    int n_swa_layers;
  } wants[] = {
      // Values from the README's model table.
      {"stories260K.gguf", 64, 5, 8, 4, 8, 172, 512, RopeStyle::norm, false, 0},
      {"qwen2-F16-embQ4_0.gguf", 128, 2, 4, 2, 32, 512, 151936, RopeStyle::neox, true, 0},
      {"qwen3-F16-embQ4_0.gguf", 128, 2, 4, 2, 128, 512, 151936, RopeStyle::neox, true, 0},
      {"gemma3-F16-embQ4_0.gguf", 128, 6, 4, 2, 128, 512, 262144, RopeStyle::neox, true, 5},
      {"phi3-F16-embQ4_K.gguf", 256, 2, 4, 2, 64, 512, 32064, RopeStyle::neox, true, 0},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.file);
    auto m = Model::load(test::testdata(std::string("models/") + w.file));
    ASSERT_TRUE(m.ok()) << m.error().msg;
    const TransformerConfig& c = (*m)->config();
    EXPECT_EQ(c.n_embd, w.n_embd);
    EXPECT_EQ(c.n_layer, w.n_layer);
    EXPECT_EQ(c.n_head, w.n_head);
    EXPECT_EQ(c.n_head_kv, w.n_head_kv);
    EXPECT_EQ(c.head_dim, w.head_dim);
    EXPECT_EQ(c.n_ff, w.n_ff);
    EXPECT_EQ(c.n_vocab, w.n_vocab);
    EXPECT_EQ(c.rope_style, w.rope);
    EXPECT_EQ(c.tied_output, w.tied);
    int n_swa = 0;
    for (auto s : c.layer_is_swa) n_swa += s;
    EXPECT_EQ(n_swa, w.n_swa_layers);
    EXPECT_GT((*m)->memory_estimate(4096), (*m)->file_size());
  }
}

// LongRoPE (phi3): a copy of the phi3 test model with rope factor tensors and keys added must
// compute what rope already computes without them: short factors of 2 = linear scaling by 2 (the
// same rotation angles, exactly), long factors used only past the original context length, and
// factors of 1 = no scaling. The unscaled model itself matches llama.cpp (golden tests).
// f32_keys: extra keys; "phi3.rope.scaling.factor" also sets the scaling type to linear.
std::vector<float> phi3_logits(const std::vector<std::pair<std::string, float>>& f32_keys, float short_f, float long_f,
                               int n_ctx, int orig_ctx, std::vector<std::vector<uint8_t>>& keep) {
  auto src = gguf::File::open(test::testdata("models/phi3-F16-embQ4_K.gguf"));
  EXPECT_TRUE(src.ok());
  gguf::Writer w;
  copy(w, *src, "phi3.rope.scaling.original_context_length", "");
  for (const auto& [k, v] : f32_keys) {
    w.add_f32(k, v);
    if (k == "phi3.rope.scaling.factor") w.add_string("phi3.rope.scaling.type", "linear");
  }
  const int n_rot = static_cast<int>(src->get_u32_or("phi3.rope.dimension_count", 64).value());  // head_dim 64
  w.add_u32("phi3.rope.scaling.original_context_length", static_cast<uint32_t>(orig_ctx > 0 ? orig_ctx : 4096));
  if (short_f > 0) {
    for (const auto& [name, f] :
         {std::pair{"rope_factors_short.weight", short_f}, {"rope_factors_long.weight", long_f}}) {
      std::vector<float> v(static_cast<size_t>(n_rot / 2), f);
      keep.emplace_back(reinterpret_cast<const uint8_t*>(v.data()),
                        reinterpret_cast<const uint8_t*>(v.data() + v.size()));
      const uint64_t ne[1] = {static_cast<uint64_t>(n_rot / 2)};
      w.add_tensor(name, GgmlType::F32, std::span<const uint64_t>(ne, 1), keep.back());
    }
  }
  auto bytes = w.write_to_memory();
  EXPECT_TRUE(bytes.ok()) << (bytes.ok() ? "" : bytes.error().msg);
  if (!bytes.ok()) return {};
  auto parsed = gguf::File::parse(*bytes);
  EXPECT_TRUE(parsed.ok());
  if (!parsed.ok()) return {};
  auto m = Model::from_file(std::move(parsed).value());
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().msg);
  if (!m.ok()) return {};
  ContextOptions co;
  co.n_ctx = n_ctx;
  co.n_threads = 1;
  auto ctx = Context::create(*m, co);
  EXPECT_TRUE(ctx.ok());
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(100 + 37 * i);
  auto lg = (*ctx)->eval(prompt);
  EXPECT_TRUE(lg.ok());
  return std::vector<float>(lg->begin(), lg->end());
}

TEST(ModelLoad, Phi3LongRopeFactors) {
  NURL_REQUIRE_TESTDATA();
  std::vector<std::vector<uint8_t>> keep;
  const auto plain = phi3_logits({}, 0, 0, 512, 0, keep);
  const auto linear2 = phi3_logits({{"phi3.rope.scaling.factor", 2.0f}}, 0, 0, 512, 0, keep);
  ASSERT_FALSE(plain.empty());
  EXPECT_NE(plain, linear2) << "scaling must change the logits for this test to mean anything";
  // Short factors (context 512 <= original 1024) of 2: the angles of linear scaling by 2.
  EXPECT_EQ(phi3_logits({}, 2.0f, 1.0f, 512, 1024, keep), linear2);
  // Context 512 > original 256: the long factors (1) apply, i.e. no scaling.
  EXPECT_EQ(phi3_logits({}, 2.0f, 1.0f, 512, 256, keep), plain);
  EXPECT_EQ(phi3_logits({}, 1.0f, 2.0f, 512, 256, keep), linear2);
  // attn_factor 1 is neutral; another value changes the attention (cos and sin scaled).
  EXPECT_EQ(phi3_logits({{"phi3.rope.scaling.attn_factor", 1.0f}}, 1.0f, 1.0f, 512, 1024, keep), plain);
  EXPECT_NE(phi3_logits({{"phi3.rope.scaling.attn_factor", 1.19f}}, 1.0f, 1.0f, 512, 1024, keep), plain);
}

TEST(ModelLoad, Phi3LongRopeNeedsBothFactorTensors) {
  NURL_REQUIRE_TESTDATA();
  auto src = gguf::File::open(test::testdata("models/phi3-F16-embQ4_K.gguf"));
  ASSERT_TRUE(src.ok());
  gguf::Writer w;
  copy(w, *src, "", "");
  std::vector<float> v(32, 1.0f);
  const uint64_t ne[1] = {32};
  w.add_tensor("rope_factors_short.weight", GgmlType::F32, std::span<const uint64_t>(ne, 1),
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4));
  auto bytes = w.write_to_memory();
  ASSERT_TRUE(bytes.ok());
  auto m = Model::from_file(gguf::File::parse(*bytes).value());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().msg.find("rope_factors_long.weight is missing"), std::string::npos) << m.error().msg;
}

}  // namespace
}  // namespace nurl
