// Model::load checks: each broken file (a tensor missing, a wrong shape, a wrong type for a norm,
// an unknown architecture, a missing key) is refused with an error naming the tensor or key.
// The broken files are real test models rewritten in memory with one thing changed.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/gguf/gguf-writer.h"
#include "engine/runtime/model.h"
#include "testdata.h"

namespace nurl {
namespace {

struct Edit {
  std::string name;
  std::function<void(gguf::Writer&, const gguf::File&)> build;  // writes all metadata and tensors
  std::string needle;                                          // must appear in the error
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

}  // namespace
}  // namespace nurl
