// Tokenizer against llama.cpp's outputs: golden/tokenizer/*.json (every case, every id variant),
// vocab/*.gguf.inp/.out pairs, the prompt tokens and vocabulary facts recorded in golden/*.json,
// and decode(encode(x)) == x where the tokenizer is lossless.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/utf8.h"
#include "engine/gguf/gguf.h"
#include "engine/tokenizer/tokenizer.h"
#include "testdata.h"

namespace nurl {
namespace {

using json = nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json read_json(const std::string& path) { return json::parse(read_file(path)); }

// Tokenizers are loaded once per file for the whole test binary.
const Tokenizer& load(const std::string& rel) {
  static std::map<std::string, Tokenizer> cache;  // test-only memo
  auto it = cache.find(rel);
  if (it != cache.end()) return it->second;
  auto f = gguf::File::open(test::testdata(rel));
  if (!f.ok()) throw std::runtime_error(rel + ": " + f.error().msg);
  auto t = Tokenizer::from_gguf(*f);
  if (!t.ok()) throw std::runtime_error(rel + ": " + t.error().msg);
  return cache.emplace(rel, std::move(*t)).first->second;
}

std::string show(const std::vector<int32_t>& v) {
  std::string s;
  for (auto x : v) s += std::to_string(x) + " ";
  return s;
}

std::vector<std::string> golden_tokenizer_files() {
  std::vector<std::string> out;
  const auto dir = test::testdata("golden/tokenizer");
  if (!std::filesystem::exists(dir)) return {"(missing)"};
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string param_name(const testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class GoldenTokenizer : public testing::TestWithParam<std::string> {};

TEST_P(GoldenTokenizer, EveryCaseEveryVariant) {
  NURL_REQUIRE_TESTDATA();
  const json g = read_json(test::testdata("golden/tokenizer/" + GetParam() + ".json"));
  const Tokenizer& tok = load(g["file"]);
  const bool adds_bos = g["metadata"]["llama_cpp_adds_bos_by_default"];
  EXPECT_EQ(tok.n_vocab(), g["metadata"]["n_tokens"].get<int>());
  int checked = 0;
  for (const auto& c : g["cases"]) {
    const std::string text = c["text"];
    // llama-tokenize passes add_special = (the vocab adds BOS) && !--no-bos.
    const std::pair<const char*, std::pair<bool, bool>> variants[] = {
        {"ids", {adds_bos, true}},
        {"ids_no_parse_special", {adds_bos, false}},
        {"ids_no_bos", {false, true}},
    };
    for (const auto& [key, mode] : variants) {
      if (!c.contains(key)) continue;
      const auto want = c[key].get<std::vector<int32_t>>();
      const auto got = tok.encode(text, mode.first, mode.second);
      EXPECT_EQ(got, want) << key << " for " << json(text).dump() << "\n got: " << show(got)
                           << "\nwant: " << show(want);
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
}

INSTANTIATE_TEST_SUITE_P(All, GoldenTokenizer, testing::ValuesIn(golden_tokenizer_files()),
                         param_name);

// vocab/<name>.gguf.inp/.out: no BOS, no special parsing.
std::vector<std::string> inp_out_vocabs() {
  std::vector<std::string> out;
  const auto dir = test::testdata("vocab");
  if (!std::filesystem::exists(dir)) return {"(missing)"};
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const std::string suffix = ".gguf.inp";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(name.substr(0, name.size() - suffix.size()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> split_inp(const std::string& s) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    const size_t m = s.find(sep, pos);
    if (m == std::string::npos) break;
    out.push_back(s.substr(pos, m - pos));
    pos = m + sep.size();
  }
  return out;
}

class VocabInpOut : public testing::TestWithParam<std::string> {};

TEST_P(VocabInpOut, AllCases) {
  NURL_REQUIRE_TESTDATA();
  const std::string name = GetParam();
  // The qwen2 test strings have no vocab file of their own: the model file carries that vocab.
  const std::string model = name == "ggml-vocab-qwen2" ? "models/qwen2-F16-embQ4_0.gguf"
                                                       : "vocab/" + name + ".gguf";
  const Tokenizer& tok = load(model);
  const auto inputs = split_inp(read_file(test::testdata("vocab/" + name + ".gguf.inp")));
  std::istringstream outs(read_file(test::testdata("vocab/" + name + ".gguf.out")));
  std::string line;
  size_t i = 0;
  for (; i < inputs.size() && std::getline(outs, line); ++i) {
    std::vector<int32_t> want;
    std::istringstream ls(line);
    for (int32_t x; ls >> x;) want.push_back(x);
    const auto got = tok.encode(inputs[i], false, false);
    EXPECT_EQ(got, want) << "case " << i << " " << json(inputs[i]).dump() << "\n got: " << show(got)
                         << "\nwant: " << show(want);
  }
  EXPECT_EQ(i, inputs.size());
  EXPECT_GE(i, 40u);
}

INSTANTIATE_TEST_SUITE_P(All, VocabInpOut, testing::ValuesIn(inp_out_vocabs()), param_name);

// golden/<model>.json: what the engine feeds the model, and the vocabulary facts.
std::vector<std::string> golden_models() {
  std::vector<std::string> out;
  const auto dir = test::testdata("golden");
  if (!std::filesystem::exists(dir)) return {"(missing)"};
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

class GoldenModel : public testing::TestWithParam<std::string> {};

TEST_P(GoldenModel, PromptTokensAndVocab) {
  NURL_REQUIRE_TESTDATA();
  const json g = read_json(test::testdata("golden/" + GetParam() + ".json"));
  const Tokenizer& tok = load("models/" + GetParam() + ".gguf");
  const json& v = g["llama_cpp"]["vocab"];
  EXPECT_EQ(tok.n_vocab(), v["n_vocab"].get<int>());
  EXPECT_EQ(tok.model() == TokenizerModel::spm ? 1 : 2, v["vocab_type"].get<int>());
  EXPECT_EQ(tok.add_bos(), v["add_bos"].get<bool>());
  EXPECT_EQ(tok.add_eos(), v["add_eos"].get<bool>());
  EXPECT_EQ(tok.bos(), v["bos"].get<int>());
  EXPECT_EQ(tok.eos(), v["eos"].get<int>());
  EXPECT_EQ(tok.eot(), v["eot"].get<int>());
  EXPECT_EQ(tok.eog_ids(), v["eog_ids"].get<std::vector<int32_t>>());
  for (int32_t id : tok.eog_ids()) EXPECT_TRUE(tok.is_eog(id));
  EXPECT_FALSE(tok.is_eog(-1));
  EXPECT_FALSE(tok.is_eog(tok.n_vocab()));

  for (const auto& r : g["results"]) {
    const std::string text = r["text"];
    const auto want = r["prompt_tokens"].get<std::vector<int32_t>>();
    const auto got = tok.encode(text, true, true);
    EXPECT_EQ(got, want) << r["id"] << "\n got: " << show(got) << "\nwant: " << show(want);

    // Pieces of the generated tokens (special tokens rendered), one at a time.
    std::string stream_text;
    std::vector<size_t> cuts;
    StreamDecoder sd(tok, /*render_special=*/true);
    for (const auto& step : r["greedy_steps"]) {
      const int32_t id = step["id"];
      std::string want_piece;
      if (step.contains("piece")) {
        want_piece = step["piece"];
      } else {
        for (int b : step["piece_bytes"]) want_piece += static_cast<char>(b);
      }
      EXPECT_EQ(tok.token_to_piece(id, true), want_piece) << "id " << id;
      EXPECT_EQ(tok.is_eog(id), step.value("eog", false)) << "id " << id;
      stream_text += sd.push(id);
      cuts.push_back(stream_text.size());
    }
    stream_text += sd.flush();
    // Every cut the stream made falls on a character boundary of the whole text.
    std::set<size_t> boundaries;
    for (size_t i = 0; i < stream_text.size();) {
      boundaries.insert(i);
      utf8::decode(stream_text, i);
    }
    boundaries.insert(stream_text.size());
    for (size_t cut : cuts) EXPECT_TRUE(boundaries.count(cut)) << "stream split a character at " << cut;
    // The streamed bytes are the pieces, unchanged; the recorded text is llama.cpp's
    // detokenizer over the generated ids (leading space of the first piece removed).
    const auto ids = r["greedy_ids"].get<std::vector<int32_t>>();
    std::string pieces;
    for (int32_t id : ids) pieces += tok.token_to_piece(id, true);
    EXPECT_EQ(stream_text, pieces);
    std::string want_text;
    if (r.contains("greedy_text")) {
      want_text = r["greedy_text"];
    } else {
      for (int b : r["greedy_text_bytes"]) want_text += static_cast<char>(b);
    }
    EXPECT_EQ(tok.decode(ids, true), want_text) << r["id"];
    if (r.contains("greedy_text_unparse_special_false")) {
      EXPECT_EQ(tok.decode(ids, false), r["greedy_text_unparse_special_false"].get<std::string>())
          << r["id"];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, GoldenModel, testing::ValuesIn(golden_models()), param_name);

// decode(encode(x)) == x on every golden string, where the tokenizer can be lossless for x.
class RoundTrip : public testing::TestWithParam<std::string> {};

bool clean_up_would_change(const std::string& s) {
  for (const char* p : {" ?", " !", " .", " ,", " ' ", " 's", " 'm", " 're", " 've"})
    if (s.find(p) != std::string::npos) return true;
  return false;
}

TEST_P(RoundTrip, DecodeEncode) {
  NURL_REQUIRE_TESTDATA();
  const json g = read_json(test::testdata("golden/tokenizer/" + GetParam() + ".json"));
  const Tokenizer& tok = load(g["file"]);
  if (tok.model() == TokenizerModel::wpm) GTEST_SKIP() << "WordPiece lowercases and drops accents";
  int checked = 0;
  for (const auto& c : g["cases"]) {
    const std::string text = c["text"];
    if (!utf8::valid(text)) continue;
    if (tok.clean_spaces() && clean_up_would_change(text)) continue;
    const auto ids = tok.encode(text, false, false);
    // An unknown-piece id (no byte fallback) cannot give the text back.
    if (std::find(ids.begin(), ids.end(), tok.unk()) != ids.end() && tok.unk() >= 0) continue;
    EXPECT_EQ(tok.decode(ids, true), text) << json(text).dump() << " ids " << show(ids);
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

INSTANTIATE_TEST_SUITE_P(All, RoundTrip, testing::ValuesIn(golden_tokenizer_files()), param_name);

}  // namespace
}  // namespace nurl
