// Token filter (see token-filter.h).
#include "engine/grammar/token-filter.h"

#include <algorithm>
#include <cstring>

namespace nurl::grammar {

namespace {

void set_bit(std::span<uint64_t> m, int32_t id) { m[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63); }
bool get_bit(std::span<const uint64_t> m, int32_t id) { return (m[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1; }

// How many top frames of a stack form its cache key: the top, and the repetition frame under it.
size_t key_frames(const Grammar& g, std::span<const Frame> s) {
  if (s.size() >= 2 && g.at(s[s.size() - 2].pos).kind == Elem::rep) return 2;
  return 1;
}

}  // namespace

TokenFilter::TokenFilter(std::shared_ptr<const Grammar> g, std::shared_ptr<const VocabTrie> vocab,
                         std::vector<int32_t> eog, std::vector<SpecialToken> specials)
    : g_(std::move(g)),
      vocab_(std::move(vocab)),
      eog_(std::move(eog)),
      specials_(std::move(specials)),
      clip_(static_cast<uint32_t>(vocab_->max_len()) + 1),
      step_(*g_) {
  std::sort(eog_.begin(), eog_.end());
  for (const auto& s : specials_) clip_ = std::max(clip_, static_cast<uint32_t>(s.text.size()) + 1);
  scratch_.assign(n_words(), 0);
}

std::string_view TokenFilter::bytes_of(int32_t token) const {
  for (const auto& s : specials_)
    if (s.id == token) return s.text;
  if (token < 0 || token >= vocab_->n_vocab()) return {};
  return vocab_->piece(token);
}

bool TokenFilter::is_eog(int32_t token) const { return std::binary_search(eog_.begin(), eog_.end(), token); }

TokenFilter::Stats TokenFilter::stats() const {
  std::lock_guard lk(mu_);
  return Stats{states_.size(), entries_.size()};
}

uint32_t TokenFilter::intern(StackSet& s) {
  // Counts beyond the longest token behave the same within one token: clip them, so a bounded
  // repetition far from its limits shares its states and cache entries.
  StackSet clipped;
  for (size_t i = 0; i < s.size(); ++i) {
    auto st = s[i];
    tmp_frames_.assign(st.begin(), st.end());
    for (Frame& f : tmp_frames_) {
      if (g_->at(f.pos).kind != Elem::rep) continue;
      f.need = std::min(f.need, clip_);
      if (f.left != kUnbounded) f.left = std::min(f.left, clip_);
    }
    clipped.add(tmp_frames_);
  }
  clipped.canonicalize();
  key_.clear();
  for (size_t i = 0; i < clipped.size(); ++i) {
    auto st = clipped[i];
    const auto n = static_cast<uint32_t>(st.size());
    key_.append(reinterpret_cast<const char*>(&n), sizeof n);
    key_.append(reinterpret_cast<const char*>(st.data()), st.size() * sizeof(Frame));
  }
  auto [it, fresh] = intern_.try_emplace(key_, static_cast<uint32_t>(states_.size()));
  if (fresh) {
    State st;
    st.has_empty = clipped.has_empty();
    for (size_t i = 0; i < clipped.size() && !st.has_live; ++i) st.has_live = !clipped[i].empty();
    st.stacks = std::move(clipped);
    states_.push_back(std::move(st));
  }
  return it->second;
}

// All 256 transitions of a state at once. A byte's successor depends only on which stacks
// take it, so bytes are grouped by that set and each group costs one step.
int32_t TokenFilter::transition(uint32_t s, uint8_t b) {
  if (states_[s].next) return states_[s].next[b];
  auto next = std::make_unique<int32_t[]>(256);
  const StackSet& stacks = states_[s].stacks;
  std::vector<const ByteSet*> tops;
  for (size_t i = 0; i < stacks.size(); ++i)
    if (!stacks[i].empty()) tops.push_back(&g_->byte_set(g_->at(stacks[i].back().pos).arg));
  std::unordered_map<std::string, int32_t> by_takers;
  std::string takers(tops.size(), '\0');
  for (unsigned c = 0; c < 256; ++c) {
    bool any = false;
    for (size_t i = 0; i < tops.size(); ++i) {
      takers[i] = tops[i]->has(static_cast<uint8_t>(c)) ? 1 : 0;
      any |= takers[i] != 0;
    }
    if (!any) {
      next[c] = -1;
      continue;
    }
    auto [it, fresh] = by_takers.try_emplace(takers, -1);
    if (fresh) {
      step_.advance(states_[s].stacks, static_cast<uint8_t>(c), tmp_);
      it->second = tmp_.empty() ? -1 : static_cast<int32_t>(intern(tmp_));
    }
    next[c] = it->second;
  }
  states_[s].next = std::move(next);
  return states_[s].next[b];
}

const TokenFilter::Entry& TokenFilter::entry(uint32_t key, bool can_refine) {
  auto found = entries_.find(key);
  if (found != entries_.end() && (can_refine || !found->second.refine)) return found->second;
  const auto& nodes = vocab_->nodes();
  const auto sorted = vocab_->sorted();
  std::fill(scratch_.begin(), scratch_.end(), 0);
  std::vector<std::pair<uint32_t, uint16_t>> exits;  // (node, depth) where the key's rule ended
  std::vector<int32_t> at(vocab_->max_len() + 1, -1);
  at[0] = static_cast<int32_t>(key);
  size_t n_accepted = 0;
  for (size_t i = 0; i < nodes.size();) {
    const VocabTrie::Node& nd = nodes[i];
    const int32_t s = transition(static_cast<uint32_t>(at[nd.depth - 1]), nd.byte);
    if (s < 0) {
      i = nd.end;
      continue;
    }
    at[nd.depth] = s;
    for (uint32_t k = nd.sub_begin; k < nd.here_end; ++k) {
      set_bit(scratch_, sorted[k]);
      ++n_accepted;
    }
    const State& st = states_[static_cast<size_t>(s)];
    if (st.has_empty && nd.here_end < nd.sub_end) exits.push_back({static_cast<uint32_t>(i), nd.depth});
    i = st.has_live ? i + 1 : nd.end;
  }
  Entry e;
  size_t n_pending = 0;
  for (auto [i, d] : exits) n_pending += nodes[i].sub_end - nodes[i].here_end;
  if (can_refine && n_pending > kMaxPending) {  // a marker: the caller refines the key instead
    e.refine = true;
    return entries_.insert_or_assign(key, std::move(e)).first->second;
  }
  for (auto [i, d] : exits) {
    const VocabTrie::Node& nd = nodes[i];
    for (uint32_t k = nd.here_end; k < nd.sub_end; ++k)
      if (!get_bit(scratch_, sorted[k])) e.pending.push_back({sorted[k], d, 0});
  }
  auto suffix = [&](const Pending& p) { return std::string_view(vocab_->piece(p.token)).substr(p.offset); };
  std::sort(e.pending.begin(), e.pending.end(), [&](const Pending& a, const Pending& b) {
    auto x = suffix(a), y = suffix(b);
    return x != y ? x < y : a.token < b.token;
  });
  for (size_t k = 0; k < e.pending.size(); ++k) {
    auto cur = suffix(e.pending[k]);
    e.max_suffix = std::max(e.max_suffix, cur.size());
    if (k == 0) continue;
    auto prev = suffix(e.pending[k - 1]);
    size_t l = 0;
    while (l < prev.size() && l < cur.size() && prev[l] == cur[l]) ++l;
    e.pending[k].lcp = static_cast<uint16_t>(l);
  }
  if (n_accepted * 32 >= static_cast<size_t>(vocab_->n_vocab())) {
    e.bits = scratch_;
  } else {
    for (size_t w = 0; w < scratch_.size(); ++w)
      for (uint64_t x = scratch_[w]; x; x &= x - 1)
        e.ids.push_back(static_cast<int32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(x))));
  }
  return entries_.insert_or_assign(key, std::move(e)).first->second;
}

// Pending tokens of an entry: the rest of each token's bytes against the stacks under the key.
void TokenFilter::check_pending(const Entry& e, std::span<const Frame> below, std::span<uint64_t> mask) {
  if (depth_.size() < e.max_suffix + 1) depth_.resize(e.max_suffix + 1);
  depth_[0].clear();
  step_.close(below, depth_[0]);
  depth_[0].canonicalize();
  size_t valid = 0;              // depth_[0..valid] hold the states of the last computed suffix
  size_t dead_at = SIZE_MAX;     // ... whose prefix of this length could not be matched
  for (const Pending& p : e.pending) {
    const std::string_view suf = std::string_view(vocab_->piece(p.token)).substr(p.offset);
    if (dead_at <= p.lcp) continue;
    size_t d = std::min<size_t>(p.lcp, valid);
    dead_at = SIZE_MAX;
    for (; d < suf.size(); ++d) {
      step_.advance(depth_[d], static_cast<uint8_t>(suf[d]), depth_[d + 1]);
      if (depth_[d + 1].empty()) {
        dead_at = d + 1;
        break;
      }
    }
    valid = dead_at == SIZE_MAX ? suf.size() : dead_at - 1;
    if (dead_at == SIZE_MAX) set_bit(mask, p.token);
  }
}

void TokenFilter::apply(std::vector<Keyed>& work, std::span<uint64_t> mask) {
  // Group the stacks by what lies under their keys; each group is one cached key. A key whose
  // rule ends inside too many tokens is refined with the frame under it (more context, fewer
  // pending tokens), down to the whole stack if need be.
  while (!work.empty()) {
    std::vector<Keyed> group, rest;
    const Keyed first = work.front();
    auto below_of = [](const Keyed& x) { return x.s.subspan(0, x.s.size() - x.k); };
    const auto below = below_of(first);
    for (const Keyed& x : work) {
      auto b = below_of(x);
      (std::equal(b.begin(), b.end(), below.begin(), below.end()) ? group : rest).push_back(x);
    }
    work = std::move(rest);
    StackSet keys;
    for (const Keyed& x : group) keys.add(x.s.subspan(x.s.size() - x.k));
    const Entry& e = entry(intern(keys), !below.empty());
    if (e.refine) {
      for (Keyed& x : group) ++x.k;
      apply(group, mask);
      continue;
    }
    if (!e.bits.empty())
      for (size_t w = 0; w < mask.size(); ++w) mask[w] |= e.bits[w];
    for (int32_t id : e.ids) set_bit(mask, id);
    if (!e.pending.empty()) check_pending(e, below, mask);
  }
}

void TokenFilter::fill(Matcher& m, std::span<uint64_t> mask) {
  std::lock_guard lk(mu_);
  std::fill(mask.begin(), mask.end(), 0);
  const StackSet& state = m.state();
  std::vector<Keyed> work;
  bool complete = false;
  for (size_t i = 0; i < state.size(); ++i) {
    auto s = state[i];
    if (s.empty()) complete = true;
    else work.push_back(Keyed{s, key_frames(*g_, s)});
  }
  apply(work, mask);
  if (complete)
    for (int32_t id : eog_) set_bit(mask, id);
  for (const auto& sp : specials_)
    if (m.accepts(sp.text)) set_bit(mask, sp.id);
}

void TokenFilter::fill_shortest(Matcher& m, std::span<uint64_t> mask) {
  std::lock_guard lk(mu_);
  std::fill(mask.begin(), mask.end(), 0);
  const uint64_t d0 = m.distance();
  if (d0 == 0) {
    for (int32_t id : eog_) set_bit(mask, id);
    return;
  }
  const auto& nodes = vocab_->nodes();
  const auto sorted = vocab_->sorted();
  if (depth_.size() < vocab_->max_len() + 1) depth_.resize(vocab_->max_len() + 1);
  depth_[0] = m.state();
  for (size_t i = 0; i < nodes.size();) {
    const VocabTrie::Node& nd = nodes[i];
    StackSet& here = depth_[nd.depth];
    step_.advance(depth_[nd.depth - 1], nd.byte, here);
    if (here.empty() || distance(*g_, here) + nd.depth != d0) {
      i = nd.end;  // off every shortest completion: so is the whole subtree
      continue;
    }
    for (uint32_t k = nd.sub_begin; k < nd.here_end; ++k) set_bit(mask, sorted[k]);
    ++i;
  }
  for (const auto& sp : specials_)
    if (m.distance_after(sp.text) + sp.text.size() == d0) set_bit(mask, sp.id);
}

uint64_t Constraint::distance_after(int32_t token) {
  if (f_->is_eog(token)) return m_.can_finish() ? 0 : Grammar::kNoEnd;
  const std::string_view b = f_->bytes_of(token);
  if (b.empty()) return Grammar::kNoEnd;
  return m_.distance_after(b);
}

bool Constraint::accept(int32_t token) {
  if (f_->is_eog(token)) return m_.can_finish();
  const std::string_view b = f_->bytes_of(token);
  if (b.empty()) return false;
  return m_.advance(b);
}

}  // namespace nurl::grammar
