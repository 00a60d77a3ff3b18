// Sampler chain (see sampler.h). Penalties are applied to a copy of the logits (work_); the
// candidate list is then built only as large as the chain needs: the argmax for greedy, the top_k
// (one heap pass over the vocabulary) when top_k is on, the nucleus found by widening top-k
// selections when only top_p is on. With 150k-token vocabularies this keeps a draw well under a
// millisecond instead of sorting the whole vocabulary per token.
#include "engine/runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace nurl {

namespace {

bool before(float la, int32_t ia, float lb, int32_t ib) { return la > lb || (la == lb && ia < ib); }

// The k best (logit desc, id asc) of w into out, best first. One pass with a heap whose front is
// the worst kept candidate, so most of the vocabulary costs one comparison.
template <typename Cand>
void select_top(std::span<const float> w, size_t k, std::vector<Cand>& out) {
  out.clear();
  k = std::min(k, w.size());
  if (k * 8 >= w.size()) {  // a heap only pays for small k: sort everything instead
    out.resize(w.size());
    for (size_t i = 0; i < w.size(); ++i) out[i] = {static_cast<int32_t>(i), w[i], 0.0f};
    std::partial_sort(out.begin(), out.begin() + static_cast<ptrdiff_t>(k), out.end(),
                      [](const Cand& a, const Cand& b) { return before(a.logit, a.id, b.logit, b.id); });
    out.resize(k);
    return;
  }
  auto worse_first = [](const Cand& a, const Cand& b) { return before(a.logit, a.id, b.logit, b.id); };
  for (size_t i = 0; i < w.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    if (out.size() < k) {
      out.push_back({id, w[i], 0.0f});
      std::push_heap(out.begin(), out.end(), worse_first);
    } else if (before(w[i], id, out.front().logit, out.front().id)) {
      std::pop_heap(out.begin(), out.end(), worse_first);
      out.back() = {id, w[i], 0.0f};
      std::push_heap(out.begin(), out.end(), worse_first);
    }
  }
  std::sort_heap(out.begin(), out.end(), worse_first);
}

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
    float& l = work_[static_cast<size_t>(id)];
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

// Smallest most-likely-first set of the whole vocabulary whose probability reaches p: widen a
// top-k selection until its mass (under the full softmax) reaches p.
void Sampler::nucleus(float p) {
  const float mx = *std::max_element(work_.begin(), work_.end());
  double z = 0;
  for (float l : work_) z += std::exp(static_cast<double>(l - mx));
  for (size_t k = 64;; k *= 4) {
    select_top(std::span<const float>(work_), k, cands_);
    double cum = 0;
    for (size_t i = 0; i < cands_.size(); ++i) {
      cum += std::exp(static_cast<double>(cands_[i].logit - mx)) / z;
      if (cum >= p) {
        cands_.resize(i + 1);
        sorted_ = true;
        return;
      }
    }
    if (cands_.size() == work_.size()) {
      sorted_ = true;
      return;
    }
  }
}

void Sampler::apply_mask(std::span<const uint64_t> allowed) {
  constexpr float kOut = -std::numeric_limits<float>::infinity();
  const size_t n = work_.size();
  for (size_t w = 0; w < allowed.size() && w * 64 < n; ++w) {
    const uint64_t x = allowed[w];
    if (x == ~uint64_t{0}) continue;
    const size_t end = std::min(n, w * 64 + 64);
    if (x == 0) {
      std::fill(work_.begin() + static_cast<ptrdiff_t>(w * 64), work_.begin() + static_cast<ptrdiff_t>(end), kOut);
      continue;
    }
    for (size_t i = w * 64; i < end; ++i)
      if (!((x >> (i & 63)) & 1)) work_[i] = kOut;
  }
}

void Sampler::run_chain(std::span<const float> logits, std::span<const uint64_t> allowed) {
  NURL_ASSERT(logits.size() == static_cast<size_t>(n_vocab_));
  work_.assign(logits.begin(), logits.end());
  const bool masked = !allowed.empty();
  if (masked) apply_mask(allowed);
  apply_penalties();

  if (opts_.temperature <= 0.0f) {
    size_t best = 0;
    for (size_t i = 1; i < work_.size(); ++i)
      if (work_[i] > work_[best]) best = i;  // strict: the lowest id wins ties
    cands_.assign(1, Cand{static_cast<int32_t>(best), work_[best], 1.0f});
    return;
  }
  bool nucleus_done = false;
  if (opts_.top_k > 0 && opts_.top_k < n_vocab_) {
    select_top(std::span<const float>(work_), static_cast<size_t>(opts_.top_k), cands_);
    sorted_ = true;
  } else if (opts_.typical_p >= 1.0f && opts_.top_p < 1.0f) {
    nucleus(opts_.top_p);  // top_p over the whole vocabulary, without sorting all of it
    nucleus_done = true;
  } else {
    cands_.resize(work_.size());
    for (size_t i = 0; i < work_.size(); ++i) cands_[i] = {static_cast<int32_t>(i), work_[i], 0.0f};
    sorted_ = false;
  }
  if (masked) std::erase_if(cands_, [](const Cand& c) { return std::isinf(c.logit); });
  typical(opts_.typical_p);
  if (!nucleus_done) top_p(opts_.top_p);
  min_p(opts_.min_p);
  for (Cand& c : cands_) c.logit /= opts_.temperature;
  softmax();
}

std::vector<TokenProb> Sampler::distribution(std::span<const float> logits, std::span<const uint64_t> allowed) {
  run_chain(logits, allowed);
  std::vector<TokenProb> out;
  out.reserve(cands_.size());
  for (const Cand& c : cands_) out.push_back({c.id, c.p});
  return out;
}

Sample Sampler::sample(std::span<const float> logits, std::span<const uint64_t> allowed) {
  run_chain(logits, allowed);
  const int32_t id = cands_.size() == 1 ? cands_[0].id : draw();
  if (!opts_.logprobs && opts_.top_logprobs == 0) return Sample{id, 0.0f, {}};
  if (opts_.temperature <= 0.0f) return logprobs_of(work_, id, opts_.top_logprobs);
  return chain_logprobs(id);
}

// The chain's own distribution: the surviving candidates with their final probabilities.
Sample Sampler::chain_logprobs(int32_t id) const {
  Sample s{id, 0.0f, {}};
  for (const Cand& c : cands_)
    if (c.id == id) s.logprob = std::log(c.p);
  if (opts_.top_logprobs > 0) {
    std::vector<Cand> top = cands_;
    const size_t n = std::min(top.size(), static_cast<size_t>(opts_.top_logprobs));
    std::partial_sort(top.begin(), top.begin() + static_cast<ptrdiff_t>(n), top.end(),
                      [](const Cand& a, const Cand& b) { return a.p > b.p || (a.p == b.p && a.id < b.id); });
    for (size_t i = 0; i < n; ++i) s.top.push_back({top[i].id, std::log(top[i].p)});
  }
  return s;
}

Sample logprobs_of(std::span<const float> logits, int32_t id, int32_t n_top) {
  float mx = -std::numeric_limits<float>::infinity();
  for (float l : logits) mx = std::max(mx, l);
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - mx));
  const float lse = mx + static_cast<float>(std::log(sum));
  Sample s{id, logits[static_cast<size_t>(id)] - lse, {}};
  if (n_top > 0) {
    struct C {
      int32_t id;
      float logit;
      float p;
    };
    std::vector<C> top;
    select_top(logits, static_cast<size_t>(n_top), top);
    for (const C& c : top)
      if (!std::isinf(c.logit)) s.top.push_back({c.id, c.logit - lse});
  }
  return s;
}

}  // namespace nurl
