// Reads the real stories260K model and checks what its golden file records about it.
#include <gtest/gtest.h>

#include "engine/gguf/gguf.h"
#include "testdata.h"

namespace nurl {
namespace {

TEST(GgufRead, Stories260K) {
  NURL_REQUIRE_TESTDATA();
  auto f = gguf::File::open(test::testdata("models/stories260K.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(*f->get_string("general.architecture"), "llama");
  EXPECT_EQ(*f->get_u32("llama.embedding_length"), 64u);
  EXPECT_EQ(*f->get_u32("llama.block_count"), 5u);
  auto tokens = f->get_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ((*tokens)->items.size(), 512u);
  const auto* emb = f->tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->type, GgmlType::F32);
  EXPECT_EQ(emb->ne[0], 64u);
  EXPECT_EQ(emb->ne[1], 512u);
  EXPECT_EQ(emb->n_bytes, 64u * 512u * 4u);
}

TEST(GgufRead, MissingKeyIsNamed) {
  NURL_REQUIRE_TESTDATA();
  auto f = gguf::File::open(test::testdata("models/stories260K.gguf"));
  ASSERT_TRUE(f.ok());
  auto r = f->get_u32("llama.rope.freq_base");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("llama.rope.freq_base"), std::string::npos);
  auto w = f->get_u32("general.architecture");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().msg.find("is string"), std::string::npos) << w.error().msg;
}

TEST(GgufDescribe, MetadataAndTensorTable) {
  NURL_REQUIRE_TESTDATA();
  auto f = gguf::File::open(test::testdata("models/stories260K.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().msg;
  const std::string d = gguf::describe(*f);
  // Header line, a metadata row (key, type, value) and a tensor row (name, type, shape, offset).
  EXPECT_NE(d.find("GGUF v3: 19 metadata keys, 48 tensors"), std::string::npos) << d.substr(0, 200);
  EXPECT_NE(d.find("general.architecture"), std::string::npos);
  EXPECT_NE(d.find("\"llama\""), std::string::npos);
  EXPECT_NE(d.find("[string; 512]"), std::string::npos);
  const auto* emb = f->tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  const size_t row = d.find("\n  token_embd.weight ");
  ASSERT_NE(row, std::string::npos);
  const std::string line = d.substr(row + 1, d.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find(" f32 "), std::string::npos) << line;
  EXPECT_NE(line.find(" 64 x 512 "), std::string::npos) << line;
  EXPECT_NE(line.find(" " + std::to_string(emb->offset) + " "), std::string::npos) << line;
  EXPECT_NE(line.find(" 131072"), std::string::npos) << line;
  // Without tensors: no table.
  EXPECT_EQ(gguf::describe(*f, false).find("token_embd.weight"), std::string::npos);
}

TEST(GgufDescribe, StringsAreEscapedAndCutOnCharacterBoundaries) {
  gguf::Value v{gguf::Value::Storage(std::string("a\nb\t\"c\"\x01"))};
  EXPECT_EQ(v.to_string(), "\"a\\nb\\t\\\"c\\\"\\x01\"");
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "\xe2\x82\xac";  // 120 bytes of '€' (3 bytes each)
  const std::string s = gguf::Value{gguf::Value::Storage(long_text)}.to_string();
  EXPECT_NE(s.find("... (120 bytes)"), std::string::npos) << s;
  const std::string shown = s.substr(1, s.find('"', 1) - 1);
  EXPECT_EQ(shown.size() % 3, 0u) << "cut inside a UTF-8 sequence: " << s;
}

}  // namespace
}  // namespace nurl
