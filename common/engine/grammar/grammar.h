// Grammar: a context-free grammar over bytes, the form every constraint compiles to (JSON
// schemas, "json", tool-call formats). A rule is a list of alternatives; an alternative is a
// sequence of items: a byte set, a reference to a rule, or a counted repetition of a rule
// (`rep body {min,max}`), which keeps its count in the matcher's stack frame instead of unrolling.
//
// Invariants after Builder::build(): no rule can reach itself without consuming a byte (no left
// recursion, so a matcher's closure always terminates); every repetition body consumes at least
// one byte; every remaining alternative can derive a finite byte string (alternatives that cannot,
// such as a recursive $ref without a base case, are pruned, and a root that cannot is an error),
// so any prefix the matcher accepts can still be completed. Sizes are bounded (Limits), so a
// hostile schema costs a bounded compile and then a clear error.
//
// Shortest completions: build() also computes, per rule, the fewest bytes any of its derivations
// has, and per position the fewest bytes from there to the end of its alternative, so a matcher
// state knows how far it is from a complete document (matcher.h, distance()).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nurl::grammar {

using RuleId = uint32_t;
constexpr uint32_t kUnbounded = 0xffffffffu;

// 256 bits: which byte values a `bytes` item matches.
struct ByteSet {
  std::array<uint64_t, 4> w{};
  bool has(uint8_t b) const { return (w[b >> 6] >> (b & 63)) & 1; }
  void add(uint8_t b) { w[b >> 6] |= uint64_t{1} << (b & 63); }
  void add_range(uint8_t lo, uint8_t hi) {
    for (unsigned b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
  }
  void remove(uint8_t b) { w[b >> 6] &= ~(uint64_t{1} << (b & 63)); }
  bool empty() const { return (w[0] | w[1] | w[2] | w[3]) == 0; }
  static ByteSet of(uint8_t b) {
    ByteSet s;
    s.add(b);
    return s;
  }
  static ByteSet range(uint8_t lo, uint8_t hi) {
    ByteSet s;
    s.add_range(lo, hi);
    return s;
  }
  bool operator==(const ByteSet&) const = default;
};

// One element of the flattened grammar. A position is an index into Grammar::elems().
struct Elem {
  enum Kind : uint8_t { bytes, ref, rep, end };
  Kind kind = end;
  uint32_t arg = 0;  // bytes: byte-set index; ref: rule; rep: repetition index; end: unused
};

struct Repeat {
  RuleId body = 0;
  uint32_t min = 0;
  uint32_t max = kUnbounded;
};

struct Limits {
  size_t max_elems = 1u << 21;  // flattened items (a huge enum or schema fails here)
  size_t max_rules = 1u << 18;
};

class Grammar {
 public:
  const std::vector<Elem>& elems() const { return elems_; }
  const Elem& at(uint32_t pos) const { return elems_[pos]; }
  // Start positions of a rule's alternatives.
  std::span<const uint32_t> alts(RuleId r) const {
    return std::span<const uint32_t>(alt_starts_).subspan(rule_alts_[r], rule_alts_[r + 1] - rule_alts_[r]);
  }
  const ByteSet& byte_set(uint32_t i) const { return sets_[i]; }
  const Repeat& repeat(uint32_t i) const { return reps_[i]; }
  RuleId root() const { return root_; }
  size_t n_rules() const { return rule_alts_.size() - 1; }
  const std::string& rule_name(RuleId r) const { return names_[r]; }
  // The rule a position belongs to.
  RuleId rule_of(uint32_t pos) const;
  // The fewest bytes a derivation of rule r has, and from position pos to the end of its
  // alternative (pos included). Saturate at kNoEnd, which a built grammar never reaches for a
  // reachable rule.
  static constexpr uint64_t kNoEnd = uint64_t{1} << 48;
  uint64_t min_len(RuleId r) const { return min_len_[r]; }
  uint64_t rest_len(uint32_t pos) const { return rest_len_[pos]; }

  // GBNF-like text, for tests and debugging.
  std::string dump() const;

 private:
  friend class Builder;
  std::vector<Elem> elems_;
  std::vector<uint32_t> alt_starts_;  // all rules' alternatives, rule by rule
  std::vector<uint32_t> rule_alts_;   // (n_rules + 1): rule r owns alt_starts_[rule_alts_[r] .. rule_alts_[r+1])
  std::vector<uint32_t> rule_first_elem_;  // first position of each rule (positions are rule-contiguous)
  std::vector<ByteSet> sets_;
  std::vector<Repeat> reps_;
  std::vector<std::string> names_;
  std::vector<uint64_t> min_len_;   // by rule
  std::vector<uint64_t> rest_len_;  // by position
  RuleId root_ = 0;

  void compute_lengths();
};

// An item of an alternative while building.
struct Item {
  Elem::Kind kind = Elem::bytes;
  uint32_t arg = 0;
};
using Seq = std::vector<Item>;

// Builds a Grammar. Rules may be declared first and defined later (recursion). Byte sets are
// interned, so literals cost one item per byte and no new sets.
class Builder {
 public:
  explicit Builder(Limits limits = {}) : limits_(limits) {}

  RuleId declare(std::string name);
  void define(RuleId r, std::vector<Seq> alternatives);
  RuleId rule(std::string name, std::vector<Seq> alternatives);

  Item bytes(const ByteSet& s);
  Item byte(uint8_t b) { return bytes(ByteSet::of(b)); }
  Item ref(RuleId r) const { return Item{Elem::ref, r}; }
  // body{min,max}; max may be kUnbounded. The body must not match the empty string.
  Item repeat(RuleId body, uint32_t min, uint32_t max);
  Item repeat(Seq body, uint32_t min, uint32_t max, std::string name);
  Item optional(Seq body, std::string name);

  Seq literal(std::string_view s);
  void append(Seq& to, std::string_view s);
  // One of the strings (byte-exact), as a prefix tree so matching stays deterministic however
  // many there are (enums). Empty list: a rule with no alternatives (matches nothing).
  RuleId one_of(const std::vector<std::string>& strings, std::string name);

  size_t n_items() const { return n_items_; }
  bool over_limits() const { return n_items_ > limits_.max_elems || names_.size() > limits_.max_rules; }

  // Validates (left recursion, nullable repetition bodies, sizes), prunes alternatives that
  // cannot finish, and flattens. Errors: Code::invalid_argument naming the rule.
  Result<Grammar> build(RuleId root) const;

 private:
  Limits limits_;
  std::vector<std::string> names_;
  std::vector<std::vector<Seq>> rules_;
  std::vector<bool> defined_;
  std::vector<ByteSet> sets_;
  std::array<uint32_t, 256> single_ = filled();  // index of the set {b}, or kUnbounded
  std::vector<Repeat> reps_;
  size_t n_items_ = 0;

  static std::array<uint32_t, 256> filled() {
    std::array<uint32_t, 256> a{};
    a.fill(kUnbounded);
    return a;
  }
};

}  // namespace nurl::grammar
