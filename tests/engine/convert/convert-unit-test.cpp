// Pieces of the converter checked on their own: the BPE pre-tokenizer identification against the
// regexes the published tokenizer.json files state (Llama 3, Qwen2, GPT-2), Llama 3.1's rope
// frequency factors against the formula's limits, inspect_checkpoint, and the output types.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/convert/arch-map.h"
#include "engine/convert/convert.h"
#include "engine/convert/hf-tokenizer.h"
#include "engine/quant/quantize-model.h"
#include "support/temp-dir.h"
#include "testdata.h"

namespace nurl {
namespace {

using convert::Json;

std::string tokenizer_json(const Json& pre_tokenizer, bool ignore_merges = false) {
  Json j;
  j["pre_tokenizer"] = pre_tokenizer;
  j["model"] = {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}}}, {"merges", Json::array({"a b"})}, {"ignore_merges", ignore_merges}};
  return j.dump();
}

Json split_then_bytelevel(const std::string& regex) {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
}

TEST(PreTokenizerIdentification, PublishedTokenizers) {
  // Llama 3 (meta-llama/Meta-Llama-3-8B tokenizer.json): digits in threes, ignore_merges.
  const std::string llama3 = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  auto r = convert::identify_pre_tokenizer(tokenizer_json(split_then_bytelevel(llama3), true));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "llama3");
  // Without ignore_merges the same split is the dbrx/smaug family.
  r = convert::identify_pre_tokenizer(tokenizer_json(split_then_bytelevel(llama3), false));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "dbrx");
  // Qwen2: single digits.
  const std::string qwen2 = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  r = convert::identify_pre_tokenizer(tokenizer_json(split_then_bytelevel(qwen2)));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_TRUE(*r == "qwen2" || *r == "stablelm2") << *r;
  // GPT-2: the ByteLevel pre-tokenizer's own regex.
  r = convert::identify_pre_tokenizer(tokenizer_json({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "gpt-2");
}

TEST(PreTokenizerIdentification, UnknownSplitsAreRefused) {
  auto r = convert::identify_pre_tokenizer(tokenizer_json(split_then_bytelevel(R"(\p{L}{1,2}|.)")));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("splits text like none of the known families"), std::string::npos) << r.error().msg;
  r = convert::identify_pre_tokenizer(tokenizer_json({{"type", "Metaspace"}, {"replacement", "_"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("Metaspace"), std::string::npos) << r.error().msg;
  r = convert::identify_pre_tokenizer(tokenizer_json(split_then_bytelevel("(unclosed")));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("pattern"), std::string::npos) << r.error().msg;
}

TEST(RopeScaling, Llama3FactorsFollowTheWavelengthBands) {
  // Llama 3.1 8B's rope_scaling: factor 8, low 1, high 4, original context 8192; head_dim 128.
  const auto f = convert::llama3_rope_factors(128, 500000, 8, 1, 4, 8192);
  ASSERT_EQ(f.size(), 64u);
  EXPECT_FLOAT_EQ(f.front(), 1.0f);  // the fastest rotation: wavelength 2π, far below 8192/4
  EXPECT_FLOAT_EQ(f.back(), 8.0f);   // the slowest: wavelength far above 8192
  for (size_t i = 1; i < f.size(); ++i) EXPECT_GE(f[i], f[i - 1]) << i;  // monotone across the bands
  for (float x : f) EXPECT_TRUE(x >= 1.0f && x <= 8.0f);
}

TEST(ConvertTypes, ListsTheConverterAndQuantiserTypes) {
  const auto t = convert::convert_types();
  for (const char* want : {"f32", "f16", "bf16", "q8_0", "q4_k_m", "q2_k", "q6_k"})
    EXPECT_NE(std::find(t.begin(), t.end(), want), t.end()) << want;
  const auto q = quant::quantize_types();
  for (const char* want : {"Q4_K_M", "Q4_K_S", "Q5_K_M", "Q5_K_S", "Q6_K", "Q3_K_M", "Q2_K", "F16", "BF16", "Q8_0"})
    EXPECT_NE(std::find(q.begin(), q.end(), want), q.end()) << want;
}

TEST(InspectCheckpoint, NamesTheArchitecture) {
  NURL_REQUIRE_TESTDATA();
  test::TempDir tmp;
  const auto dir = tmp / "Qwen2-Tiny";
  const std::string cmd = std::string("/usr/bin/python3 '") + NURL_HF_EXPORTER + "' '" +
                          test::testdata("models/qwen2-F16-embQ4_0.gguf") + "' '" + dir.string() + "' --dtype bf16";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto info = convert::inspect_checkpoint(dir);
  ASSERT_TRUE(info.ok()) << info.error().msg;
  EXPECT_EQ(info->architecture, "qwen2");
  EXPECT_EQ(info->hf_class, "Qwen2ForCausalLM");
  EXPECT_EQ(info->default_name, "qwen2-tiny");
  EXPECT_EQ(info->bytes, std::filesystem::file_size(dir / "model.safetensors"));
  auto bad = convert::inspect_checkpoint(tmp / "nowhere");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().msg.find("nowhere"), std::string::npos);
}

}  // namespace
}  // namespace nurl
