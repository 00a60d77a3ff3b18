// EngineRunner::step — prompt chunks and decode tokens of several slots in one forward — gives
// every slot the greedy tokens it gets alone (prefill, then one decode per step, one slot at a
// time), with the real engine on testdata's stories260K, whose own greedy text is a llama.cpp
// golden elsewhere; here the solo runs are the oracle for the merged ones.
#include <gtest/gtest.h>

#include "scheduler/engine-loader.h"
#include "testdata.h"

namespace nurl::sched {
namespace {

constexpr int kSteps = 12;

std::shared_ptr<LoadedModel> load(int n_parallel) {
  LoadSpec spec;
  spec.path = test::testdata("models/stories260K.gguf");
  spec.n_ctx = 256;
  spec.n_parallel = n_parallel;
  auto m = engine_loader().load(spec);
  EXPECT_TRUE(m.ok()) << m.error().msg;
  return m.ok() ? *m : nullptr;
}

Sampling greedy() {
  Sampling s;
  s.temperature = 0.0f;
  return s;
}

// One slot alone: the prompt in one prefill, then kSteps decodes.
std::vector<int32_t> solo(LoadedModel& m, const std::vector<int32_t>& prompt) {
  auto r = m.make_runner(1, 256);
  EXPECT_TRUE(r.ok());
  BatchRunner& run = **r;
  run.reset(0, greedy());
  auto t = run.prefill(0, prompt, true);
  EXPECT_TRUE(t.ok());
  std::vector<int32_t> out{*t};
  for (int i = 0; i < kSteps; ++i) {
    std::vector<int32_t> next(1);
    const SlotToken st{0, out.back()};
    EXPECT_TRUE(run.decode({&st, 1}, next).ok());
    out.push_back(next[0]);
  }
  return out;
}

TEST(EngineStep, MergedPromptsAndDecodesEqualSoloRuns) {
  auto m = load(3);
  ASSERT_TRUE(m);
  std::vector<std::vector<int32_t>> prompts;
  for (const char* text : {"Once upon a time", "The little dog ran to the park and", "Lily"}) {
    auto t = m->tokenize(text, true);
    ASSERT_TRUE(t.ok());
    prompts.push_back(*t);
  }
  std::vector<std::vector<int32_t>> want;
  for (const auto& p : prompts) want.push_back(solo(*m, p));

  // Slot 0 starts alone; slot 1's prompt arrives in two chunks while slot 0 decodes; slot 2's in
  // one chunk together with slot 1's last. Every step is one runner step.
  auto r = m->make_runner(3, 256);
  ASSERT_TRUE(r.ok());
  BatchRunner& run = **r;
  for (int s = 0; s < 3; ++s) run.reset(s, greedy());
  std::vector<std::vector<int32_t>> got(3);
  const std::span<const int32_t> p1(prompts[1]);
  const size_t half = p1.size() / 2;
  for (int step = 0; step < kSteps + 4; ++step) {
    std::vector<SlotPrompt> chunks;
    if (step == 0) chunks.push_back({0, prompts[0], true});
    if (step == 2) chunks.push_back({1, p1.subspan(0, half), false});
    if (step == 3) {
      chunks.push_back({1, p1.subspan(half), true});
      chunks.push_back({2, prompts[2], true});
    }
    std::vector<SlotToken> batch;
    for (int s = 0; s < 3; ++s)
      if (!got[static_cast<size_t>(s)].empty() && got[static_cast<size_t>(s)].size() <= kSteps)
        batch.push_back({s, got[static_cast<size_t>(s)].back()});
    std::vector<int32_t> first(chunks.size(), -2), next(batch.size(), -2);
    ASSERT_TRUE(run.step(chunks, first, batch, next).ok()) << "step " << step;
    for (size_t i = 0; i < batch.size(); ++i) got[static_cast<size_t>(batch[i].slot)].push_back(next[i]);
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (chunks[i].want_next) got[static_cast<size_t>(chunks[i].slot)].push_back(first[i]);
      else EXPECT_EQ(first[i], -1);
    }
  }
  for (int s = 0; s < 3; ++s) EXPECT_EQ(got[static_cast<size_t>(s)], want[static_cast<size_t>(s)]) << "slot " << s;
}

}  // namespace
}  // namespace nurl::sched
