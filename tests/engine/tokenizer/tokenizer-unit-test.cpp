// Tokenizer behaviour beyond the golden token lists: load errors that name the key, the
// streaming decoder on byte-fallback ids recorded by llama.cpp, the control-looking "</s>"
// overrides described in the test-data README, user-defined pieces without special parsing,
// invalid UTF-8, out-of-range ids, and concurrent use.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"
#include "engine/tokenizer/tokenizer.h"
#include "testdata.h"

namespace nurl {
namespace {

using json = nlohmann::json;

struct Loaded {
  gguf::File file;
  Tokenizer tok;
};

Loaded load(const std::string& rel) {
  auto f = gguf::File::open(test::testdata(rel));
  if (!f.ok()) throw std::runtime_error(rel + ": " + f.error().msg);
  auto t = Tokenizer::from_gguf(*f);
  if (!t.ok()) throw std::runtime_error(rel + ": " + t.error().msg);
  return {std::move(*f), std::move(*t)};
}

json golden_tokenizer(const std::string& name) {
  std::ifstream in(test::testdata("golden/tokenizer/" + name + ".json"));
  return json::parse(in);
}

// Rewrites a vocab file's metadata in memory and loads the tokenizer from it.
Result<Tokenizer> edited(const std::string& rel, const std::function<void(gguf::Writer&)>& edit) {
  auto src = gguf::File::open(test::testdata(rel));
  if (!src.ok()) return src.error();
  gguf::Writer w = gguf::Writer::from_file(*src);
  edit(w);
  auto bytes = w.write_to_memory();
  if (!bytes.ok()) return bytes.error();
  auto f = gguf::File::parse(*bytes);
  if (!f.ok()) return f.error();
  return Tokenizer::from_gguf(*f);
}

gguf::Value str(std::string s) { return gguf::Value{gguf::Value::Storage(std::move(s))}; }

TEST(TokenizerLoad, UnknownPreTokenizerIsNamed) {
  NURL_REQUIRE_TESTDATA();
  auto t = edited("vocab/ggml-vocab-gpt-2.gguf",
                  [](gguf::Writer& w) { w.set("tokenizer.ggml.pre", str("no-such-pre")); });
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, Code::unsupported);
  EXPECT_NE(t.error().msg.find("tokenizer.ggml.pre"), std::string::npos) << t.error().msg;
  EXPECT_NE(t.error().msg.find("no-such-pre"), std::string::npos) << t.error().msg;
}

TEST(TokenizerLoad, UnsupportedModelIsNamed) {
  NURL_REQUIRE_TESTDATA();
  auto t = edited("vocab/ggml-vocab-llama-spm.gguf",
                  [](gguf::Writer& w) { w.set("tokenizer.ggml.model", str("t5")); });
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, Code::unsupported);
  EXPECT_NE(t.error().msg.find("'t5'"), std::string::npos) << t.error().msg;
}

TEST(TokenizerLoad, MissingMergesAndTokensAreNamed) {
  NURL_REQUIRE_TESTDATA();
  auto no_merges = edited("vocab/ggml-vocab-gpt-2.gguf",
                          [](gguf::Writer& w) { w.remove("tokenizer.ggml.merges"); });
  ASSERT_FALSE(no_merges.ok());
  EXPECT_NE(no_merges.error().msg.find("tokenizer.ggml.merges"), std::string::npos);
  auto no_tokens = edited("vocab/ggml-vocab-llama-spm.gguf",
                          [](gguf::Writer& w) { w.remove("tokenizer.ggml.tokens"); });
  ASSERT_FALSE(no_tokens.ok());
  EXPECT_NE(no_tokens.error().msg.find("tokenizer.ggml.tokens"), std::string::npos);
}

TEST(TokenizerLoad, ArrayLengthMismatchIsNamed) {
  NURL_REQUIRE_TESTDATA();
  auto t = edited("vocab/ggml-vocab-llama-spm.gguf", [](gguf::Writer& w) {
    const std::vector<float> scores(10, 0.0f);
    w.set("tokenizer.ggml.scores", gguf::make_array(gguf::ValueType::f32, [&] {
            std::vector<gguf::Value> v;
            for (float s : scores) v.push_back(gguf::Value{gguf::Value::Storage(s)});
            return v;
          }()));
  });
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, Code::corrupt);
  EXPECT_NE(t.error().msg.find("tokenizer.ggml.scores"), std::string::npos) << t.error().msg;
}

// The emoji case of the Phi-3 golden: llama.cpp encodes each emoji as four byte pieces.
TEST(StreamDecoder, HoldsBytesUntilTheCharacterCompletes) {
  NURL_REQUIRE_TESTDATA();
  const auto l = load("vocab/ggml-vocab-phi-3.gguf");
  std::string text;
  std::vector<int32_t> ids;
  const json g = golden_tokenizer("ggml-vocab-phi-3");
  for (const auto& c : g["cases"])
    if (c["text"].get<std::string>().rfind("\xF0\x9F\x9A\x80", 0) == 0) {  // starts with 🚀
      text = c["text"];
      ids = c["ids_no_bos"].get<std::vector<int32_t>>();
    }
  ASSERT_FALSE(ids.empty());
  const std::string full = " " + text;  // the pieces start with the ▁ prefix
  StreamDecoder sd(l.tok);
  std::string out;
  for (int32_t id : ids) {
    out += sd.push(id);
    // What came out so far is a prefix of the text that ends on a character boundary.
    ASSERT_EQ(out, full.substr(0, out.size()));
    const size_t n = out.size();
    EXPECT_TRUE(n == full.size() || (static_cast<unsigned char>(full[n]) & 0xC0) != 0x80) << n;
  }
  EXPECT_EQ(out + sd.flush(), full);

  // The first emoji's pieces: nothing until the fourth byte, and flush() gives back what is held.
  StreamDecoder partial(l.tok);
  EXPECT_EQ(partial.push(ids[0]), " ");
  EXPECT_EQ(partial.push(ids[1]), "");
  EXPECT_EQ(partial.push(ids[2]), "");
  EXPECT_EQ(partial.flush(), text.substr(0, 2));
}

TEST(SpecialTokens, ControlLookingEndOfSentenceBecomesControlAndEog) {
  NURL_REQUIRE_TESTDATA();
  // README: Qwen id 128247 and Gemma 3 id 212 have the text "</s>"; llama.cpp makes them control
  // and end-of-generation tokens.
  for (const auto& [file, id] : {std::pair<std::string, int32_t>{"models/qwen2-F16-embQ4_0.gguf", 128247},
                                 {"models/gemma3-F16-embQ4_0.gguf", 212}}) {
    const auto l = load(file);
    EXPECT_EQ(l.tok.token_text(id), "</s>");
    EXPECT_EQ(l.tok.token_type(id), TokenType::control) << file;
    EXPECT_TRUE(l.tok.is_eog(id)) << file;
    EXPECT_EQ(l.tok.find_token("</s>"), id);
    EXPECT_EQ(l.tok.encode("</s>", false, true), std::vector<int32_t>{id}) << file;
    const auto plain = l.tok.encode("</s>", false, false);
    EXPECT_GT(plain.size(), 1u) << file;
    EXPECT_EQ(l.tok.decode(plain, false), "</s>") << file;
    EXPECT_EQ(l.tok.token_to_piece(id, false), "");
    EXPECT_EQ(l.tok.token_to_piece(id, true), "</s>");
  }
}

TEST(SpecialTokens, GemmaUserDefinedPiecesMatchWithoutSpecialParsing) {
  NURL_REQUIRE_TESTDATA();
  const auto l = load("models/gemma3-F16-embQ4_0.gguf");
  const auto nn = l.tok.find_token("\n\n");
  ASSERT_TRUE(nn.has_value());
  EXPECT_EQ(l.tok.token_type(*nn), TokenType::user_defined);
  for (bool parse_special : {false, true}) {
    const auto ids = l.tok.encode("a\n\nb", false, parse_special);
    EXPECT_NE(std::find(ids.begin(), ids.end(), *nn), ids.end());
  }
  const auto sot = l.tok.find_token("<start_of_turn>");
  ASSERT_TRUE(sot.has_value());
  EXPECT_EQ(l.tok.encode("<start_of_turn>", false, true), std::vector<int32_t>{*sot});
  EXPECT_GT(l.tok.encode("<start_of_turn>", false, false).size(), 1u);
}

TEST(Encode, InvalidUtf8NeverFails) {
  NURL_REQUIRE_TESTDATA();
  for (const char* file : {"models/qwen2-F16-embQ4_0.gguf", "vocab/ggml-vocab-llama-spm.gguf",
                           "vocab/ggml-vocab-bert-bge.gguf"}) {
    const auto l = load(file);
    const std::string bad = "ok \xFF\xC3 \xE2\x82 end\x80";
    const auto ids = l.tok.encode(bad, true, true);
    EXPECT_FALSE(ids.empty()) << file;
    for (int32_t id : ids) EXPECT_TRUE(id >= 0 && id < l.tok.n_vocab()) << file;
  }
  // Byte-level BPE sees U+FFFD for each bad byte, as llama.cpp does.
  const auto q = load("models/qwen2-F16-embQ4_0.gguf");
  EXPECT_EQ(q.tok.encode("a\xFF" "b", false, false), q.tok.encode("a\xEF\xBF\xBD" "b", false, false));
  // SentencePiece keeps the bytes (byte fallback), so they come back.
  const auto s = load("vocab/ggml-vocab-llama-spm.gguf");
  const std::string raw = "x\xFFy\xC3";
  EXPECT_EQ(s.tok.decode(s.tok.encode(raw, false, false), false), raw);
}

TEST(Decode, OutOfRangeIdsRenderNothing) {
  NURL_REQUIRE_TESTDATA();
  const auto l = load("vocab/ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(l.tok.token_to_piece(-1, true), "");
  EXPECT_EQ(l.tok.token_to_piece(l.tok.n_vocab(), true), "");
  const std::vector<int32_t> ids = {-5, l.tok.n_vocab() + 7};
  EXPECT_EQ(l.tok.decode(ids, true), "");
  EXPECT_FALSE(l.tok.is_eog(-1));
}

TEST(Encode, ConcurrentCallsAgreeWithSerial) {
  NURL_REQUIRE_TESTDATA();
  const auto l = load("models/qwen2-F16-embQ4_0.gguf");
  std::vector<std::string> texts;
  const json g = golden_tokenizer("qwen2-F16-embQ4_0");
  for (const auto& c : g["cases"]) texts.push_back(c["text"]);
  std::vector<std::vector<int32_t>> serial;
  for (const auto& t : texts) serial.push_back(l.tok.encode(t, true, true));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int rep = 0; rep < 20; ++rep)
        for (size_t i = 0; i < texts.size(); ++i)
          if (l.tok.encode(texts[i], true, true) != serial[i]) ++mismatches[k];
    });
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(Vocab, AccessorsAgree) {
  NURL_REQUIRE_TESTDATA();
  const auto l = load("models/phi3-F16-embQ4_K.gguf");
  EXPECT_EQ(l.tok.model(), TokenizerModel::spm);
  EXPECT_EQ(l.tok.token_text(32007), "<|end|>");
  EXPECT_EQ(l.tok.token_type(32007), TokenType::control);
  EXPECT_EQ(l.tok.token_type(3), TokenType::byte);  // <0x00>
  EXPECT_EQ(l.tok.token_to_piece(3, false), std::string(1, '\0'));
  int checked = 0;
  for (int32_t id = 0; id < l.tok.n_vocab(); id += 97) {
    const auto back = l.tok.find_token(l.tok.token_text(id));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(l.tok.token_text(*back), l.tok.token_text(id));
    ++checked;
  }
  EXPECT_GT(checked, 300);
}

}  // namespace
}  // namespace nurl
