// Model name grammar: the expectations follow ollama's documented naming (default host
// registry.ollama.ai, namespace library, tag latest) and Hugging Face's ORG/REPO/FILE layout.
#include "api/model-name.h"
#include "support/param-name.h"

#include <gtest/gtest.h>

namespace nurl {
namespace {

struct Good {
  const char* in;
  const char* host;
  const char* ns;
  const char* model;
  const char* tag;
  const char* display;
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const Good& c, std::ostream* os) { *os << c.in; }

class ModelNameGood : public ::testing::TestWithParam<Good> {};

TEST_P(ModelNameGood, Parses) {
  const Good& g = GetParam();
  auto r = parse_model_name(g.in);
  ASSERT_TRUE(r.ok()) << g.in << ": " << r.error().msg;
  EXPECT_EQ(r->host, g.host);
  EXPECT_EQ(r->ns, g.ns);
  EXPECT_EQ(r->model, g.model);
  EXPECT_EQ(r->tag, g.tag);
  EXPECT_EQ(r->display(), g.display);
  EXPECT_EQ(r->manifest_path(),
            std::string(g.host) + "/" + g.ns + "/" + g.model + "/" + g.tag);
  // The display form is a fixed point of parsing.
  auto again = parse_model_name(r->display());
  ASSERT_TRUE(again.ok()) << again.error().msg;
  EXPECT_EQ(*again, *r);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ModelNameGood,
    ::testing::Values(
        Good{"llama3", "registry.ollama.ai", "library", "llama3", "latest", "llama3:latest"},
        Good{"llama3:8b", "registry.ollama.ai", "library", "llama3", "8b", "llama3:8b"},
        Good{"llama3.2:1b-instruct-q4_K_M", "registry.ollama.ai", "library", "llama3.2",
             "1b-instruct-q4_K_M", "llama3.2:1b-instruct-q4_K_M"},
        Good{"library/qwen3:0.6b", "registry.ollama.ai", "library", "qwen3", "0.6b", "qwen3:0.6b"},
        Good{"me/tiny", "registry.ollama.ai", "me", "tiny", "latest", "me/tiny:latest"},
        Good{"me/tiny_model-2:v1.0", "registry.ollama.ai", "me", "tiny_model-2", "v1.0",
             "me/tiny_model-2:v1.0"},
        Good{"registry.ollama.ai/library/gemma3:1b", "registry.ollama.ai", "library", "gemma3",
             "1b", "gemma3:1b"},
        Good{"example.com/me/tiny:q4", "example.com", "me", "tiny", "q4", "example.com/me/tiny:q4"},
        Good{"localhost/me/tiny", "localhost", "me", "tiny", "latest", "localhost/me/tiny:latest"},
        Good{"hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M", "hf.co", "bartowski",
             "Llama-3.2-1B-Instruct-GGUF", "Q4_K_M", "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M"},
        Good{"hf.co/org/repo", "hf.co", "org", "repo", "latest", "hf.co/org/repo:latest"},
        Good{"huggingface.co/org/repo:Q8_0", "hf.co", "org", "repo", "Q8_0", "hf.co/org/repo:Q8_0"},
        Good{"HF.CO/org/repo:Q8_0", "hf.co", "org", "repo", "Q8_0", "hf.co/org/repo:Q8_0"},
        Good{"hf.co/unsloth/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf", "hf.co", "unsloth",
             "Qwen3-0.6B-GGUF", "Qwen3-0.6B-Q4_K_M.gguf",
             "hf.co/unsloth/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf"},
        // The file form and the tag form of the same file are one name.
        Good{"hf.co/org/repo:model.gguf", "hf.co", "org", "repo", "model.gguf",
             "hf.co/org/repo/model.gguf"},
        Good{"hf.co/lmstudio.community/repo:Q4_0", "hf.co", "lmstudio.community", "repo", "Q4_0",
             "hf.co/lmstudio.community/repo:Q4_0"},
        Good{"_x:_y", "registry.ollama.ai", "library", "_x", "_y", "_x:_y"}),
    [](const auto& info) { return nurl::test::numbered_case_name(info.index, info.param.in); });

class ModelNameBad : public ::testing::TestWithParam<const char*> {};

TEST_P(ModelNameBad, Rejected) {
  auto r = parse_model_name(GetParam());
  ASSERT_FALSE(r.ok()) << "accepted: \"" << GetParam() << "\" as " << r->manifest_path();
  EXPECT_EQ(r.error().code, Code::invalid_argument);
  EXPECT_NE(r.error().msg.find("invalid model name"), std::string::npos) << r.error().msg;
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, ModelNameBad,
    ::testing::Values(
        "", ":", "model:", ":tag", "a:b:c", "/model", "model/", "a//b", "..", ".", "../etc/passwd",
        "a/../b", "..:latest", "model:..", "model:../../x", "me/..model", "..hidden", ".hidden",
        "-dash", "model:-tag", "a\\b", "a b", "a\tb", "caf\xc3\xa9", "%2e%2e/x", "a/b/c",
        "a/b/c/d", "example.com/a/b/c", "hf.co/o/r/notgguf.bin", "hf.co/o/r/f.gguf:Q4",
        "hf.co/o/r/../x.gguf", "hf.co/o/../x.gguf", "hf.co/o/r/.gguf", "example.com:8080/a/b",
        "example..com/a/b", ".example.com/a/b", "ns.with.dot/model", "model?x=1", "model#frag",
        "a/b/c/d/e", "m@sha256:abc", "~/model", "$HOME", "model;rm -rf", "a*b"),
    [](const auto& info) { return nurl::test::numbered_case_name(info.index, info.param); });

TEST(ModelName, RejectsNulAndOverlong) {
  std::string with_nul("ab\0cd", 5);
  EXPECT_FALSE(parse_model_name(with_nul).ok());
  EXPECT_FALSE(parse_model_name(std::string(600, 'a')).ok());
  EXPECT_FALSE(parse_model_name(std::string(129, 'a')).ok());  // one segment > 128
  EXPECT_TRUE(parse_model_name(std::string(128, 'a')).ok());
}

TEST(ModelName, SanitizeMakesValidSegments) {
  struct Case { const char* in; const char* out; };
  for (auto c : {Case{"Llama-3.2 1B (Q4)", "llama-3.2-1b-q4"}, Case{"../../etc", "etc"},
                 Case{"...", "model"}, Case{"", "model"}, Case{"a..b", "a.b"},
                 Case{"stories260K", "stories260k"}, Case{"__x", "__x"}}) {
    std::string s = sanitize_model_segment(c.in);
    EXPECT_EQ(s, c.out) << c.in;
    EXPECT_TRUE(valid_name_segment(s)) << s;
  }
}

}  // namespace
}  // namespace nurl
