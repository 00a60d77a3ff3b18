// Matching a Grammar byte by byte. The state is a set of stacks (a pushdown automaton run on
// every alternative at once); a stack is a list of frames, bottom first, each frame a position
// in the grammar. After every step the state is "closed": each stack's top is a byte set (the
// next byte it can take), or the stack is empty, which means the root rule is complete.
// A repetition frame counts what is still needed (need) and allowed (left), so `{0,1000}` costs
// one frame, not a thousand rules. Stacks deeper than max_depth are dropped (bounded nesting).
// The distance of a state is the fewest bytes that complete it (0: complete): per stack the sum
// of its frames' shortest rests (Grammar::rest_len, a repetition frame its still needed
// iterations too), the least over the stacks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"

namespace nurl::grammar {

struct Frame {
  uint32_t pos = 0;   // index into Grammar::elems()
  uint32_t need = 0;  // repetition frames: iterations still required
  uint32_t left = 0;  // repetition frames: iterations still allowed (kUnbounded: no limit)
  bool operator==(const Frame&) const = default;
  auto operator<=>(const Frame&) const = default;
};

// Stacks stored as runs of one frame buffer.
class StackSet {
 public:
  void clear() {
    frames_.clear();
    ends_.clear();
  }
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  std::span<const Frame> operator[](size_t i) const {
    const uint32_t b = i == 0 ? 0 : ends_[i - 1];
    return std::span<const Frame>(frames_).subspan(b, ends_[i] - b);
  }
  void add(std::span<const Frame> s) {
    frames_.insert(frames_.end(), s.begin(), s.end());
    ends_.push_back(static_cast<uint32_t>(frames_.size()));
  }
  // The last stack, removed into `out`.
  void pop_back_into(std::vector<Frame>& out);
  bool has_empty() const;
  // Sorts the stacks and removes duplicates, so equal states compare equal.
  void canonicalize();
  size_t n_frames() const { return frames_.size(); }
  bool operator==(const StackSet& o) const { return frames_ == o.frames_ && ends_ == o.ends_; }

 private:
  std::vector<Frame> frames_;
  std::vector<uint32_t> ends_;
};

// The fewest bytes that complete a stack, and a state (Grammar::kNoEnd for a dead, empty state).
uint64_t distance(const Grammar& g, std::span<const Frame> stack);
uint64_t distance(const Grammar& g, const StackSet& state);

// Closure and one-byte steps over a grammar, with reusable scratch (one per thread).
class Stepper {
 public:
  explicit Stepper(const Grammar& g, size_t max_depth = 512) : g_(&g), max_depth_(max_depth) {}

  // The frame for entering position p (a repetition starts with its bounds).
  Frame enter(uint32_t p) const;
  // Appends to `out` every stack reachable from `s` without consuming a byte whose top is a
  // byte set, and the empty stack if `s` can finish. Does not canonicalize.
  void close(std::span<const Frame> s, StackSet& out);
  // Every stack of `in` that takes byte b, advanced and closed, into `out` (canonical).
  void advance(const StackSet& in, uint8_t b, StackSet& out);
  // The closed initial state of the root rule.
  void start(StackSet& out);

  const Grammar& grammar() const { return *g_; }

 private:
  const Grammar* g_;
  size_t max_depth_;
  StackSet work_;
  std::vector<Frame> tmp_, tmp2_;
};

// A running match of one output against a grammar.
class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> g, size_t max_depth = 512);

  void reset();
  // Consumes bytes if the grammar allows all of them; otherwise returns false and keeps the state.
  bool advance(std::string_view bytes);
  // Whether bytes would be accepted (a valid prefix), without changing the state.
  bool accepts(std::string_view bytes);
  // The output so far is a complete document.
  bool can_finish() const { return state_.has_empty(); }
  // A complete document that cannot be extended by any byte.
  bool finished() const;
  // The fewest bytes that complete the document (0: complete now), and the same after `bytes`
  // (Grammar::kNoEnd if the grammar does not allow them), without changing the state.
  uint64_t distance() const { return grammar::distance(*g_, state_); }
  uint64_t distance_after(std::string_view bytes);

  const StackSet& state() const { return state_; }
  const Grammar& grammar() const { return *g_; }
  Stepper& stepper() { return step_; }

 private:
  bool probe(std::string_view bytes);  // the state after `bytes` into probe_; false if rejected

  std::shared_ptr<const Grammar> g_;
  Stepper step_;
  StackSet state_, next_, probe_;
};

}  // namespace nurl::grammar
