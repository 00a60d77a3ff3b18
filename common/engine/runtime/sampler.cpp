// Sampler chain (see sampler.h). Candidates start in id order (cands_[i].id == i), so penalties
// index them directly; filters that need an order sort once (sorted_) and truncate the vector.
#include "engine/runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace nurl {

namespace {

bool before(float la, int32_t ia, float lb, int32_t ib) { return la > lb || (la == lb && ia < ib); }

}  // namespace

Sampler::Sampler(const Options& opts, int32_t n_vocab) : opts_(opts), n_vocab_(n_vocab) {
  window_ = opts.repeat_last_n < 0 ? opts.num_ctx : opts.repeat_last_n;
  history_.reserve(static_cast<size_t>(std::max(window_, 0)));
  cands_.reserve(static_cast<size_t>(n_vocab));
  uint64_t seed = opts.seed >= 0 ? static_cast<uint64_t>(opts.seed) : std::random_device{}();
  rng_.seed(seed);
}

void Sampler::accept(int32_t id) {
  if (window_ <= 0) return;
  if (history_.size() < static_cast<size_t>(window_)) {
    history_.push_back(id);
  } else {
    history_[hist_pos_] = id;
    hist_pos_ = (hist_pos_ + 1) % history_.size();
  }
}

void Sampler::accept(std::span<const int32_t> ids) {
  for (int32_t id : ids) accept(id);
}

void Sampler::reset_history() {
  history_.clear();
  hist_pos_ = 0;
}

// For each distinct token seen in the window: a positive logit is divided by repeat_penalty and a
// negative one multiplied (both make it less likely), then count·frequency + presence is subtracted.
void Sampler::apply_penalties() {
  const bool rep = opts_.repeat_penalty != 1.0f, freq = opts_.frequency_penalty != 0.0f,
             pres = opts_.presence_penalty != 0.0f;
  if (history_.empty() || (!rep && !freq && !pres)) return;
  std::unordered_map<int32_t, int32_t> counts;
  for (int32_t id : history_) ++counts[id];
  for (auto [id, n] : counts) {
    if (id < 0 || id >= n_vocab_) continue;
    float& l = cands_[static_cast<size_t>(id)].logit;
    if (rep) l = l <= 0 ? l * opts_.repeat_penalty : l / opts_.repeat_penalty;
    l -= static_cast<float>(n) * opts_.frequency_penalty + (n > 0 ? opts_.presence_penalty : 0.0f);
  }
}

void Sampler::sort_desc() {
  if (sorted_) return;
  std::sort(cands_.begin(), cands_.end(), [](const Cand& a, const Cand& b) { return before(a.logit, a.id, b.logit, b.id); });
  sorted_ = true;
}

void Sampler::softmax() {
  float mx = -std::numeric_limits<float>::infinity();
  for (const Cand& c : cands_) mx = std::max(mx, c.logit);
  double sum = 0;
  for (Cand& c : cands_) {
    c.p = std::exp(c.logit - mx);
    sum += c.p;
  }
  for (Cand& c : cands_) c.p = static_cast<float>(c.p / sum);
}

void Sampler::top_k(int32_t k) {
  if (k <= 0 || static_cast<size_t>(k) >= cands_.size()) return;
  if (!sorted_) {
    std::partial_sort(cands_.begin(), cands_.begin() + k, cands_.end(),
                      [](const Cand& a, const Cand& b) { return before(a.logit, a.id, b.logit, b.id); });
    sorted_ = true;  // the kept prefix is sorted
  }
  cands_.resize(static_cast<size_t>(k));
}

// Locally typical sampling: keep the tokens whose surprisal -log p is closest to the entropy H,
// in that order, until their probabilities add up to more than p.
void Sampler::typical(float p) {
  if (p >= 1.0f || cands_.size() <= 1) return;
  softmax();
  double h = 0;
  for (const Cand& c : cands_)
    if (c.p > 0) h -= c.p * std::log(static_cast<double>(c.p));
  std::vector<std::pair<double, size_t>> dist(cands_.size());
  for (size_t i = 0; i < cands_.size(); ++i) {
    double s = cands_[i].p > 0 ? -std::log(static_cast<double>(cands_[i].p)) : std::numeric_limits<double>::infinity();
    dist[i] = {std::fabs(s - h), i};
  }
  std::stable_sort(dist.begin(), dist.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double cum = 0;
  size_t keep = dist.size();
  for (size_t i = 0; i < dist.size(); ++i) {
    cum += cands_[dist[i].second].p;
    if (cum > p) {
      keep = i + 1;
      break;
    }
  }
  std::vector<Cand> kept;
  kept.reserve(keep);
  for (size_t i = 0; i < keep; ++i) kept.push_back(cands_[dist[i].second]);
  cands_ = std::move(kept);
  sorted_ = false;
}

// Nucleus: the smallest most-likely-first prefix whose probability reaches p.
void Sampler::top_p(float p) {
  if (p >= 1.0f || cands_.size() <= 1) return;
  sort_desc();
  softmax();
  double cum = 0;
  for (size_t i = 0; i < cands_.size(); ++i) {
    cum += cands_[i].p;
    if (cum >= p) {
      cands_.resize(i + 1);
      return;
    }
  }
}

// Keeps tokens with probability >= p · (probability of the most likely one).
void Sampler::min_p(float p) {
  if (p <= 0.0f || cands_.size() <= 1) return;
  float mx = -std::numeric_limits<float>::infinity();
  for (const Cand& c : cands_) mx = std::max(mx, c.logit);
  const float cut = mx + std::log(p);
  std::erase_if(cands_, [cut](const Cand& c) { return c.logit < cut; });
}

double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

int32_t Sampler::draw() {
  double u = uniform(), cum = 0;
  for (const Cand& c : cands_) {
    cum += c.p;
    if (u < cum) return c.id;
  }
  return cands_.back().id;  // rounding left u above the total
}

void Sampler::run_chain(std::span<const float> logits) {
  NURL_ASSERT(logits.size() == static_cast<size_t>(n_vocab_));
  cands_.resize(static_cast<size_t>(n_vocab_));
  for (int32_t i = 0; i < n_vocab_; ++i) cands_[static_cast<size_t>(i)] = {i, logits[static_cast<size_t>(i)], 0.0f};
  sorted_ = false;
  apply_penalties();

  if (opts_.temperature <= 0.0f) {
    size_t best = 0;
    for (size_t i = 1; i < cands_.size(); ++i)
      if (before(cands_[i].logit, cands_[i].id, cands_[best].logit, cands_[best].id)) best = i;
    cands_ = {Cand{cands_[best].id, cands_[best].logit, 1.0f}};
    return;
  }
  top_k(opts_.top_k);
  typical(opts_.typical_p);
  top_p(opts_.top_p);
  min_p(opts_.min_p);
  for (Cand& c : cands_) c.logit /= opts_.temperature;
  softmax();
}

std::vector<TokenProb> Sampler::distribution(std::span<const float> logits) {
  run_chain(logits);
  std::vector<TokenProb> out;
  out.reserve(cands_.size());
  for (const Cand& c : cands_) out.push_back({c.id, c.p});
  return out;
}

Sample Sampler::sample(std::span<const float> logits) {
  run_chain(logits);
  const int32_t id = cands_.size() == 1 ? cands_[0].id : draw();
  if (!opts_.logprobs && opts_.top_logprobs == 0) return Sample{id, 0.0f, {}};
  return logprobs_of(logits, id, opts_.top_logprobs);
}

Sample logprobs_of(std::span<const float> logits, int32_t id, int32_t n_top) {
  float mx = -std::numeric_limits<float>::infinity();
  for (float l : logits) mx = std::max(mx, l);
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - mx));
  const float lse = mx + static_cast<float>(std::log(sum));
  Sample s{id, logits[static_cast<size_t>(id)] - lse, {}};
  if (n_top > 0) {
    const size_t n = std::min(static_cast<size_t>(n_top), logits.size());
    std::vector<int32_t> ids(logits.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
    std::partial_sort(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(n), ids.end(), [&](int32_t a, int32_t b) {
      return before(logits[static_cast<size_t>(a)], a, logits[static_cast<size_t>(b)], b);
    });
    for (size_t i = 0; i < n; ++i) s.top.push_back({ids[i], logits[static_cast<size_t>(ids[i])] - lse});
  }
  return s;
}

}  // namespace nurl
