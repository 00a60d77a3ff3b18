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

}  // namespace
}  // namespace nurl
