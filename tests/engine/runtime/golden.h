// Reading llama.cpp's greedy goldens (shared/testdata/golden/<model>.json) for the runtime tests:
// prompt ids, greedy ids and pieces, and how many leading greedy steps are comparable
// (those before the first step whose recorded top-1/top-2 margin is below the tolerance).
#pragma once

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/runtime/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "testdata.h"

namespace nurl::test {

// Loads the real stories260K model and its tokenizer (the runtime tests' common subject).
// Failures are fatal assertions: callers check HasFatalFailure() after it.
inline void load_stories260k(std::shared_ptr<const Model>& model, std::unique_ptr<Tokenizer>& tok) {
  NURL_REQUIRE_TESTDATA();
  auto m = Model::load(testdata("models/stories260K.gguf"));
  ASSERT_TRUE(m.ok()) << m.error().msg;
  model = *m;
  auto t = Tokenizer::from_gguf(model->file());
  ASSERT_TRUE(t.ok()) << t.error().msg;
  tok = std::make_unique<Tokenizer>(*t);
}

struct GoldenPrompt {
  std::string id;
  std::string text;
  std::vector<int32_t> prompt_tokens;
  std::vector<int32_t> greedy_ids;
  std::vector<std::string> pieces;  // bytes of each greedy token as llama.cpp rendered it, with
                                    // special tokens (bos, eos, eot, eog ids) rendered as nothing,
                                    // as generated text shows them
  int comparable = 0;               // greedy steps [0, comparable) must match exactly
};

inline std::vector<GoldenPrompt> load_golden(const std::string& model, double tolerance) {
  std::ifstream in(testdata("golden/" + model + ".json"));
  auto j = nlohmann::json::parse(in);
  const auto& v = j["llama_cpp"]["vocab"];
  std::vector<int32_t> special = v["eog_ids"].get<std::vector<int32_t>>();
  for (const char* k : {"bos", "eos", "eot"}) special.push_back(v[k].get<int32_t>());
  std::vector<GoldenPrompt> out;
  for (const auto& r : j["results"]) {
    GoldenPrompt g;
    g.id = r["id"];
    g.text = r["text"];
    g.prompt_tokens = r["prompt_tokens"].get<std::vector<int32_t>>();
    g.greedy_ids = r["greedy_ids"].get<std::vector<int32_t>>();
    g.comparable = static_cast<int>(g.greedy_ids.size());
    int i = 0;
    for (const auto& s : r["greedy_steps"]) {
      if (std::find(special.begin(), special.end(), s["id"].get<int32_t>()) != special.end()) {
        g.pieces.emplace_back();
      } else if (s.contains("piece")) {
        g.pieces.push_back(s["piece"].get<std::string>());
      } else {
        std::string b;
        for (int x : s["piece_bytes"]) b.push_back(static_cast<char>(x));
        g.pieces.push_back(b);
      }
      if (s["margin"].get<double>() < tolerance && i < g.comparable) g.comparable = i;
      ++i;
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace nurl::test
