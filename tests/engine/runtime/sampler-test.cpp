// Sampler chain on small distributions whose results can be checked by hand
// (probabilities 0.5 / 0.3 / 0.15 / 0.05 unless said otherwise).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "engine/runtime/sampler.h"
#include "support/param-name.h"

namespace nurl {
namespace {

std::vector<float> logits_of(std::vector<double> probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

const std::vector<float> kFour = logits_of({0.5, 0.3, 0.15, 0.05});

Options sampling(float temperature = 1.0f) {
  Options o;
  o.temperature = temperature;
  o.top_k = 0;
  o.top_p = 1.0f;
  o.min_p = 0.0f;
  o.typical_p = 1.0f;
  o.repeat_penalty = 1.0f;
  o.seed = 1234;
  return o;
}

std::map<int32_t, float> dist(Sampler& s, const std::vector<float>& l) {
  std::map<int32_t, float> m;
  for (auto tp : s.distribution(l)) m[tp.id] = tp.p;
  return m;
}

TEST(Sampler, GreedyIsArgmaxLowestIdOnTies) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0, 3);
  Options o = greedy_options();
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> l(1000);
    for (auto& x : l) x = nd(rng);
    Sampler s(o, 1000);
    auto want = std::max_element(l.begin(), l.end()) - l.begin();
    EXPECT_EQ(s.sample(l).id, want);
  }
  Sampler s(o, 4);
  EXPECT_EQ(s.sample(std::vector<float>{1.0f, 3.0f, 3.0f, 2.0f}).id, 1);
}

TEST(Sampler, NoFiltersGivesSoftmax) {
  Sampler s(sampling(), 4);
  auto d = dist(s, kFour);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_NEAR(d[0], 0.5, 1e-6);
  EXPECT_NEAR(d[1], 0.3, 1e-6);
  EXPECT_NEAR(d[2], 0.15, 1e-6);
  EXPECT_NEAR(d[3], 0.05, 1e-6);
}

TEST(Sampler, TopKKeepsKMostLikely) {
  Options o = sampling();
  o.top_k = 2;
  Sampler s(o, 4);
  auto d = dist(s, kFour);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NEAR(d[0], 0.5 / 0.8, 1e-6);
  EXPECT_NEAR(d[1], 0.3 / 0.8, 1e-6);
}

// top_p keeps the smallest most-likely-first set whose mass reaches p.
struct TopPCase {
  float p;
  std::set<int32_t> kept;
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const TopPCase& c, std::ostream* os) { *os << "top_p " << c.p; }
class TopP : public ::testing::TestWithParam<TopPCase> {};
TEST_P(TopP, KeepsMinimalSet) {
  Options o = sampling();
  o.top_p = GetParam().p;
  Sampler s(o, 4);
  auto d = dist(s, kFour);
  std::set<int32_t> ids;
  double mass = 0;
  for (auto [id, p] : d) ids.insert(id);
  for (int32_t id : GetParam().kept) mass += std::exp(kFour[static_cast<size_t>(id)]);
  EXPECT_EQ(ids, GetParam().kept);
  for (auto [id, p] : d) EXPECT_NEAR(p, std::exp(kFour[static_cast<size_t>(id)]) / mass, 1e-6);
}
INSTANTIATE_TEST_SUITE_P(Sampler, TopP,
                         ::testing::Values(TopPCase{0.1f, {0}}, TopPCase{0.49f, {0}}, TopPCase{0.51f, {0, 1}},
                                           TopPCase{0.75f, {0, 1}}, TopPCase{0.85f, {0, 1, 2}},
                                           TopPCase{0.99f, {0, 1, 2, 3}}),
                         [](const auto& info) { return test::case_name("p_", info.param.p); });

// min_p keeps tokens with p >= min_p · p_max (p_max = 0.5).
struct MinPCase {
  float min_p;
  std::set<int32_t> kept;
};
void PrintTo(const MinPCase& c, std::ostream* os) { *os << "min_p " << c.min_p; }
class MinP : public ::testing::TestWithParam<MinPCase> {};
TEST_P(MinP, RelativeToMax) {
  Options o = sampling();
  o.min_p = GetParam().min_p;
  Sampler s(o, 4);
  std::set<int32_t> ids;
  for (auto tp : s.distribution(kFour)) ids.insert(tp.id);
  EXPECT_EQ(ids, GetParam().kept);
}
INSTANTIATE_TEST_SUITE_P(Sampler, MinP,
                         ::testing::Values(MinPCase{0.05f, {0, 1, 2, 3}}, MinPCase{0.25f, {0, 1, 2}},
                                           MinPCase{0.5f, {0, 1}}, MinPCase{0.7f, {0}}, MinPCase{1.0f, {0}}),
                         [](const auto& info) { return test::case_name("min_p_", info.param.min_p); });

// Entropy H = 1.1422 nats; surprisals 0.693, 1.204, 1.897, 2.996 → distances 0.449, 0.062,
// 0.755, 1.854: token 1 is the most "typical", then 0, 2, 3. Kept until the mass exceeds p.
struct TypicalCase {
  float p;
  std::set<int32_t> kept;
};
void PrintTo(const TypicalCase& c, std::ostream* os) { *os << "typical_p " << c.p; }
class Typical : public ::testing::TestWithParam<TypicalCase> {};
TEST_P(Typical, KeepsMostTypical) {
  Options o = sampling();
  o.typical_p = GetParam().p;
  Sampler s(o, 4);
  std::set<int32_t> ids;
  for (auto tp : s.distribution(kFour)) ids.insert(tp.id);
  EXPECT_EQ(ids, GetParam().kept);
}
INSTANTIATE_TEST_SUITE_P(Sampler, Typical,
                         ::testing::Values(TypicalCase{0.2f, {1}}, TypicalCase{0.5f, {0, 1}},
                                           TypicalCase{0.9f, {0, 1, 2}}, TypicalCase{0.97f, {0, 1, 2, 3}}),
                         [](const auto& info) { return test::case_name("p_", info.param.p); });

TEST(Sampler, TemperatureScalesLogits) {
  // logits {0, ln 3}: at T = 2 the odds become sqrt(3) : 1.
  std::vector<float> l{0.0f, static_cast<float>(std::log(3.0))};
  Sampler s(sampling(2.0f), 2);
  auto d = dist(s, l);
  EXPECT_NEAR(d[1], std::sqrt(3.0) / (1 + std::sqrt(3.0)), 1e-6);
  EXPECT_NEAR(d[0], 1 / (1 + std::sqrt(3.0)), 1e-6);
}

TEST(Sampler, DrawsFollowTheDistribution) {
  std::vector<float> l{0.0f, static_cast<float>(std::log(3.0))};
  Sampler s(sampling(1.0f), 2);
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ones += s.sample(l).id == 1;
  EXPECT_NEAR(ones / double(n), 0.75, 0.015);  // σ ≈ 0.003
}

TEST(Sampler, SameSeedSameDrawsDifferentSeedDifferentDraws) {
  std::vector<float> flat(100, 0.0f);
  auto run = [&](int64_t seed) {
    Options o = sampling();
    o.seed = seed;
    Sampler s(o, 100);
    std::vector<int32_t> ids;
    for (int i = 0; i < 64; ++i) ids.push_back(s.sample(flat).id);
    return ids;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
  auto ids = run(42);
  EXPECT_GT(std::set<int32_t>(ids.begin(), ids.end()).size(), 30u);  // really random over 100
}

// Penalties: greedy on two close logits, so the decision flips exactly where the rule says.
struct PenaltyCase {
  std::string name;
  std::vector<float> logits;
  std::vector<int32_t> history;
  float repeat, freq, presence;
  int32_t last_n;
  int32_t want;
};
void PrintTo(const PenaltyCase& c, std::ostream* os) { *os << c.name; }
class Penalty : public ::testing::TestWithParam<PenaltyCase> {};
TEST_P(Penalty, Greedy) {
  const auto& c = GetParam();
  Options o = greedy_options();
  o.repeat_penalty = c.repeat;
  o.frequency_penalty = c.freq;
  o.presence_penalty = c.presence;
  o.repeat_last_n = c.last_n;
  Sampler s(o, static_cast<int32_t>(c.logits.size()));
  s.accept(c.history);
  EXPECT_EQ(s.sample(c.logits).id, c.want) << c.name;
}
INSTANTIATE_TEST_SUITE_P(
    Sampler, Penalty,
    ::testing::Values(
        PenaltyCase{"positive logit divided: 2/1.1=1.82 < 1.9", {2.0f, 1.9f}, {0}, 1.1f, 0, 0, 64, 1},
        PenaltyCase{"positive logit divided: 2/1.05=1.905 > 1.9", {2.0f, 1.9f}, {0}, 1.05f, 0, 0, 64, 0},
        PenaltyCase{"negative logit multiplied: -1.1 < -1.05", {-1.0f, -1.05f}, {0}, 1.1f, 0, 0, 64, 1},
        PenaltyCase{"repeat counts once per token", {2.0f, 1.9f}, {0, 0, 0}, 1.05f, 0, 0, 64, 0},
        PenaltyCase{"frequency 3x0.3: 2.1 > 2", {3.0f, 2.0f}, {0, 0, 0}, 1.0f, 0.3f, 0, 64, 0},
        PenaltyCase{"frequency 3x0.4: 1.8 < 2", {3.0f, 2.0f}, {0, 0, 0}, 1.0f, 0.4f, 0, 64, 1},
        PenaltyCase{"presence once: 3-0.9 > 2", {3.0f, 2.0f}, {0, 0, 0}, 1.0f, 0, 0.9f, 64, 0},
        PenaltyCase{"presence once: 3-1.1 < 2", {3.0f, 2.0f}, {0, 0, 0}, 1.0f, 0, 1.1f, 64, 1},
        PenaltyCase{"outside the window", {3.0f, 2.0f, 0.0f}, {0, 2, 2}, 1.0f, 0, 1.1f, 2, 0},
        PenaltyCase{"inside the window", {3.0f, 2.0f, 0.0f}, {2, 2, 0}, 1.0f, 0, 1.1f, 2, 1},
        PenaltyCase{"window 0 is off", {3.0f, 2.0f}, {0}, 1.0f, 0, 1.1f, 0, 0}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(Sampler, FiltersKeepAtLeastOne) {
  Options o = sampling();
  o.top_p = 0.0f;
  o.min_p = 1.0f;
  o.typical_p = 0.0f;
  Sampler s(o, 4);
  EXPECT_EQ(s.distribution(kFour).size(), 1u);
}

// Greedy: the distribution whose argmax is taken, i.e. the penalised logits at temperature 1.
TEST(Sampler, GreedyLogprobsFromThePenalisedDistribution) {
  Options o = greedy_options();
  o.logprobs = true;
  o.top_logprobs = 3;
  o.repeat_penalty = 2.0f;
  o.repeat_last_n = 64;
  Sampler s(o, 4);
  s.accept(0);
  Sample r = s.sample(kFour);
  EXPECT_EQ(r.id, 1);  // 0's logit ln 0.5 < 0 → doubled: ln 0.25 < ln 0.3
  // Penalised probabilities 0.25, 0.3, 0.15, 0.05 over their sum 0.75.
  EXPECT_NEAR(r.logprob, std::log(0.3 / 0.75), 1e-5);
  ASSERT_EQ(r.top.size(), 3u);
  EXPECT_EQ(r.top[0].id, 1);
  EXPECT_EQ(r.top[1].id, 0);
  EXPECT_NEAR(r.top[1].logprob, std::log(0.25 / 0.75), 1e-5);
  EXPECT_EQ(r.top[2].id, 2);
  EXPECT_NEAR(r.top[2].logprob, std::log(0.15 / 0.75), 1e-5);
}

// Sampling: the truncated, tempered distribution of the draw; excluded tokens are never listed.
TEST(Sampler, SampledLogprobsFromTheTruncatedDistribution) {
  Options o = sampling();
  o.top_k = 2;
  o.temperature = 1.0f;
  o.logprobs = true;
  o.top_logprobs = 4;
  Sampler s(o, 4);
  Sample r = s.sample(kFour);
  ASSERT_EQ(r.top.size(), 2u);  // top_k kept two
  EXPECT_EQ(r.top[0].id, 0);
  EXPECT_NEAR(r.top[0].logprob, std::log(0.5 / 0.8), 1e-5);
  EXPECT_EQ(r.top[1].id, 1);
  EXPECT_NEAR(r.top[1].logprob, std::log(0.3 / 0.8), 1e-5);
  EXPECT_TRUE(r.id == 0 || r.id == 1);
  EXPECT_NEAR(r.logprob, r.id == 0 ? std::log(0.5 / 0.8) : std::log(0.3 / 0.8), 1e-5);
}

// The mask applies before the chain: only allowed tokens are drawn or reported.
TEST(Sampler, MaskRestrictsTheDraw) {
  Options o = sampling();
  o.top_k = 0;
  o.top_p = 1.0f;
  o.temperature = 1.0f;
  o.logprobs = true;
  o.top_logprobs = 4;
  Sampler s(o, 4);
  const std::vector<uint64_t> allowed{0b1100};  // tokens 2 and 3
  for (int i = 0; i < 50; ++i) {
    Sample r = s.sample(kFour, allowed);
    ASSERT_TRUE(r.id == 2 || r.id == 3);
    ASSERT_EQ(r.top.size(), 2u);
    EXPECT_EQ(r.top[0].id, 2);
    EXPECT_NEAR(r.top[0].logprob, std::log(0.15 / 0.2), 1e-5);
  }
  Options g = greedy_options();
  Sampler gs(g, 4);
  EXPECT_EQ(gs.sample(kFour, allowed).id, 2);
  EXPECT_EQ(gs.sample(kFour, std::vector<uint64_t>{0b1000}).id, 3);
}

TEST(Options, ValidateNamesTheOption) {
  Options o;
  EXPECT_TRUE(o.validate().ok());
  o.top_logprobs = 50;
  auto r = o.validate();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("top_logprobs"), std::string::npos);
  o = Options{};
  o.stop = {""};
  EXPECT_FALSE(o.validate().ok());
}

}  // namespace
}  // namespace nurl
