// The forward-pass comparison against llama.cpp's goldens (shared/testdata/golden/*.json): for
// every recorded prompt, feed the recorded prompt ids, compare the final-position logits (top-50,
// the strided samples, the full row when recorded) within the README's tolerance, the top-1, and
// the greedy continuation token by token up to the first recorded near-tie (margin < tolerance).
// Used for every testdata model (golden-forward-test) and for files the converter and quantiser
// write from them.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "testdata.h"

namespace nurl::test {

using nlohmann::json;

// The README's acceptance: 0.1 for files whose matrices are all F32/F16/BF16, 0.5 once any
// matrix (including a tied embedding used as the output) is quantised.
inline float tolerance_for(const json& golden) {
  for (const auto& t : golden["model"]["tensors"]) {
    const std::string type = t[1];
    if (t[2].size() >= 2 && type != "F32" && type != "F16" && type != "BF16") return 0.5f;
  }
  return 0.1f;
}

inline int argmax(std::span<const float> v) {
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Runs `model_path` on every prompt of golden/<name>.json and compares (gtest assertions).
inline void check_golden_forward(const std::string& model_path, const std::string& name) {
  std::ifstream in(test::testdata("golden/" + name + ".json"));
  ASSERT_TRUE(in) << name;
  const json g = json::parse(in);
  const float tol = tolerance_for(g);

  auto model = Model::load(model_path);
  ASSERT_TRUE(model.ok()) << model.error().msg;
  const int n_vocab = (*model)->n_vocab();
  ASSERT_EQ(n_vocab, g["llama_cpp"]["vocab"]["n_vocab"].get<int>());

  size_t longest = 0;
  for (const auto& r : g["results"]) longest = std::max(longest, r["prompt_tokens"].size());
  ContextOptions co;
  co.n_ctx = static_cast<int>(longest) + 40;
  co.n_threads = 2;
  auto ctx = Context::create(*model, co);
  ASSERT_TRUE(ctx.ok()) << ctx.error().msg;
  Context& cx = **ctx;

  float max_final = 0, max_greedy = 0;
  int n_checked_steps = 0, n_results = 0;
  for (const auto& r : g["results"]) {
    const std::string id = r["id"];
    SCOPED_TRACE(name + " / " + id);
    cx.clear(0);
    const std::vector<int32_t> prompt = r["prompt_tokens"].get<std::vector<int32_t>>();
    auto lg = cx.eval(prompt);
    ASSERT_TRUE(lg.ok()) << lg.error().msg;
    std::vector<float> logits(lg->begin(), lg->end());

    // Final-position logits.
    const json& fl = r["final_logits"];
    float d_final = 0;
    for (const auto& t : fl["top"]) d_final = std::max(d_final, std::fabs(logits[t[0].get<size_t>()] - t[1].get<float>()));
    const size_t stride = fl["sample_stride"];
    const auto& samples = fl["samples"];
    for (size_t k = 0; k < samples.size(); ++k)
      d_final = std::max(d_final, std::fabs(logits[k * stride] - samples[k].get<float>()));
    if (fl.contains("full")) {
      const auto& full = fl["full"];
      ASSERT_EQ(full.size(), static_cast<size_t>(n_vocab));
      for (size_t k = 0; k < full.size(); ++k) d_final = std::max(d_final, std::fabs(logits[k] - full[k].get<float>()));
    }
    EXPECT_LE(d_final, tol) << "final logits differ";
    max_final = std::max(max_final, d_final);
    const float gap = fl["top"][0][1].get<float>() - fl["top"][1][1].get<float>();
    if (gap >= tol) {
      EXPECT_EQ(argmax(logits), fl["top"][0][0].get<int>()) << "top-1 differs";
    }

    // Greedy continuation: identical ids up to the first step whose recorded margin is below tol.
    const auto& steps = r["greedy_steps"];
    for (size_t s = 0; s < steps.size(); ++s) {
      const int want = steps[s]["id"];
      const float margin = steps[s]["margin"];
      if (margin < tol) break;  // near-tie: either engine may legitimately pick the other token
      const int got = argmax(logits);
      ASSERT_EQ(got, want) << "greedy step " << s << " (recorded margin " << margin << ")";
      const float d = std::fabs(logits[static_cast<size_t>(want)] - steps[s]["logit"].get<float>());
      EXPECT_LE(d, tol) << "greedy step " << s << " logit";
      max_greedy = std::max(max_greedy, d);
      ++n_checked_steps;
      if (s + 1 == steps.size()) break;
      const int32_t next = want;
      auto l2 = cx.eval(std::span<const int32_t>(&next, 1));
      ASSERT_TRUE(l2.ok()) << l2.error().msg;
      logits.assign(l2->begin(), l2->end());
    }
    ++n_results;
    if (std::getenv("NURL_GOLDEN_VERBOSE"))
      std::printf("  %-14s final %.4f  prompt %zu\n", id.c_str(), d_final, prompt.size());
  }
  std::printf("[golden] %-24s tol %.1f  max|dlogit| final %.4f  greedy %.4f  (%d prompts, %d greedy steps checked)\n",
              name.c_str(), tol, max_final, max_greedy, n_results, n_checked_steps);
}

}  // namespace nurl::test
