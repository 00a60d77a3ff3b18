// Closure and byte steps of the grammar matcher (see matcher.h).
#include "engine/grammar/matcher.h"

#include <algorithm>
#include <numeric>

namespace nurl::grammar {

void StackSet::pop_back_into(std::vector<Frame>& out) {
  const uint32_t e = ends_.back();
  const uint32_t b = ends_.size() == 1 ? 0 : ends_[ends_.size() - 2];
  out.assign(frames_.begin() + b, frames_.begin() + e);
  frames_.resize(b);
  ends_.pop_back();
}

bool StackSet::has_empty() const {
  for (size_t i = 0; i < ends_.size(); ++i)
    if ((i == 0 ? 0 : ends_[i - 1]) == ends_[i]) return true;
  return false;
}

void StackSet::canonicalize() {
  const size_t n = size();
  if (n <= 1) return;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  auto less = [&](uint32_t a, uint32_t b) {
    auto x = (*this)[a], y = (*this)[b];
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
  };
  auto same = [&](uint32_t a, uint32_t b) {
    auto x = (*this)[a], y = (*this)[b];
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  };
  bool sorted_unique = true;
  for (size_t i = 1; i < n && sorted_unique; ++i) sorted_unique = less(order[i - 1], order[i]);
  if (sorted_unique) return;
  std::sort(order.begin(), order.end(), less);
  order.erase(std::unique(order.begin(), order.end(), same), order.end());
  StackSet out;
  out.frames_.reserve(frames_.size());
  for (uint32_t i : order) out.add((*this)[i]);
  *this = std::move(out);
}

uint64_t distance(const Grammar& g, std::span<const Frame> stack) {
  uint64_t d = 0;
  for (const Frame& f : stack) {
    const Elem& e = g.at(f.pos);
    uint64_t rest = g.rest_len(f.pos);
    if (e.kind == Elem::rep) {
      const uint64_t body = g.min_len(g.repeat(e.arg).body);
      rest = g.rest_len(f.pos + 1) + (f.need == 0 || body == 0          ? 0
                                      : body > Grammar::kNoEnd / f.need ? Grammar::kNoEnd
                                                                        : body * f.need);
    }
    d = std::min(Grammar::kNoEnd, d + std::min(Grammar::kNoEnd, rest));
  }
  return d;
}

uint64_t distance(const Grammar& g, const StackSet& state) {
  uint64_t best = Grammar::kNoEnd;
  for (size_t i = 0; i < state.size() && best > 0; ++i) best = std::min(best, distance(g, state[i]));
  return best;
}

Frame Stepper::enter(uint32_t p) const {
  const Elem& e = g_->at(p);
  if (e.kind != Elem::rep) return Frame{p, 0, 0};
  const Repeat& r = g_->repeat(e.arg);
  return Frame{p, r.min, r.max};
}

void Stepper::start(StackSet& out) {
  out.clear();
  for (uint32_t a : g_->alts(g_->root())) {
    Frame f = enter(a);
    close(std::span<const Frame>(&f, 1), out);
  }
  out.canonicalize();
}

void Stepper::close(std::span<const Frame> s, StackSet& out) {
  work_.clear();
  work_.add(s);
  while (!work_.empty()) {
    work_.pop_back_into(tmp_);
    if (tmp_.empty()) {
      out.add(tmp_);
      continue;
    }
    const Frame f = tmp_.back();
    const Elem& e = g_->at(f.pos);
    switch (e.kind) {
      case Elem::bytes:
        out.add(tmp_);
        break;
      case Elem::end:
        tmp_.pop_back();  // back to the caller, whose frame already points past the call
        work_.add(tmp_);
        break;
      case Elem::ref: {
        tmp_.pop_back();
        if (g_->at(f.pos + 1).kind != Elem::end) tmp_.push_back(enter(f.pos + 1));  // else a tail call
        if (tmp_.size() + 1 > max_depth_) break;
        for (uint32_t a : g_->alts(e.arg)) {
          tmp_.push_back(enter(a));
          work_.add(tmp_);
          tmp_.pop_back();
        }
        break;
      }
      case Elem::rep: {
        const Repeat& r = g_->repeat(e.arg);
        if (f.need == 0) {  // leave the repetition
          tmp_.back() = enter(f.pos + 1);
          work_.add(tmp_);
          tmp_.back() = f;
        }
        if (f.left > 0 && tmp_.size() + 1 <= max_depth_) {  // one more iteration
          tmp_.back() = Frame{f.pos, f.need > 0 ? f.need - 1 : 0, f.left == kUnbounded ? kUnbounded : f.left - 1};
          for (uint32_t a : g_->alts(r.body)) {
            tmp_.push_back(enter(a));
            work_.add(tmp_);
            tmp_.pop_back();
          }
        }
        break;
      }
    }
  }
}

void Stepper::advance(const StackSet& in, uint8_t b, StackSet& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    auto s = in[i];
    if (s.empty()) continue;
    const Frame& top = s.back();
    if (!g_->byte_set(g_->at(top.pos).arg).has(b)) continue;
    tmp2_.assign(s.begin(), s.end());
    tmp2_.back() = enter(top.pos + 1);
    close(tmp2_, out);
  }
  out.canonicalize();
}

Matcher::Matcher(std::shared_ptr<const Grammar> g, size_t max_depth) : g_(std::move(g)), step_(*g_, max_depth) {
  reset();
}

void Matcher::reset() { step_.start(state_); }

bool Matcher::probe(std::string_view bytes) {
  probe_ = state_;
  for (char c : bytes) {
    step_.advance(probe_, static_cast<uint8_t>(c), next_);
    if (next_.empty()) return false;
    std::swap(probe_, next_);
  }
  return true;
}

bool Matcher::advance(std::string_view bytes) {
  if (!probe(bytes)) return false;
  std::swap(state_, probe_);
  return true;
}

bool Matcher::accepts(std::string_view bytes) {
  return probe(bytes);
}

uint64_t Matcher::distance_after(std::string_view bytes) {
  return probe(bytes) ? grammar::distance(*g_, probe_) : Grammar::kNoEnd;
}

bool Matcher::finished() const {
  for (size_t i = 0; i < state_.size(); ++i)
    if (!state_[i].empty()) return false;
  return can_finish();
}

}  // namespace nurl::grammar
