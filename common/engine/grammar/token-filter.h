// Which tokens a grammar allows next, fast enough for every decode step of a 150k-token vocabulary.
//
// A matcher state is a set of stacks. Most of what a token can do depends only on the top of a
// stack (inside a string, any string character is fine whatever encloses the string), so each
// stack's top frames — the top frame, and the repetition frame under it when there is one — are a
// key, and for each key the vocabulary trie is walked once (lazily, cached): a token is
// *accepted* if the key alone consumes all its bytes, *rejected* if the key alone fails it, and
// *pending* if the key's rule ends inside the token (a string closed by `",`); pending tokens
// keep the rest of their bytes, checked each step against the real stacks under the key, sharing
// prefixes. The walk runs on a lazily built automaton whose states are interned stack sets (with
// repetition counts clipped to the longest token, which keeps them exact within one token), so
// it costs one table look-up per trie node. A step then costs a few mask ORs plus the pending
// suffixes: the whole vocabulary is never re-matched.
//
// Tokens with no bytes are never allowed; end-of-generation tokens are allowed exactly when the
// document is complete; `specials` (control tokens that print their text, such as a tool-call
// marker) are allowed when the matcher accepts their text.
//
// For a document that must end soon (a token budget), fill_shortest() gives the tokens that
// start a shortest completion: every byte of them one step closer to a complete document (the
// matcher's distance), found by a walk of the trie that only descends along such bytes, so it
// visits a few hundred nodes, not the vocabulary.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "engine/grammar/matcher.h"
#include "engine/grammar/vocab-trie.h"

namespace nurl::grammar {

struct SpecialToken {
  int32_t id;
  std::string text;
};

class TokenFilter {
 public:
  TokenFilter(std::shared_ptr<const Grammar> g, std::shared_ptr<const VocabTrie> vocab, std::vector<int32_t> eog,
              std::vector<SpecialToken> specials);

  // Sets in `mask` (n_vocab bits, zeroed first) the tokens the state of `m` allows.
  void fill(Matcher& m, std::span<uint64_t> mask);
  // Sets in `mask` (zeroed first) the tokens whose every byte brings the state of `m` one byte
  // closer to a complete document; the end-of-generation tokens when it is complete.
  void fill_shortest(Matcher& m, std::span<uint64_t> mask);

  // The bytes a token puts into the matcher ("" for tokens the grammar never takes).
  std::string_view bytes_of(int32_t token) const;
  bool is_eog(int32_t token) const;
  const std::shared_ptr<const Grammar>& grammar() const { return g_; }
  const VocabTrie& vocab() const { return *vocab_; }
  size_t n_words() const { return (static_cast<size_t>(vocab_->n_vocab()) + 63) / 64; }

  struct Stats {
    size_t walk_states = 0;  // interned automaton states
    size_t entries = 0;      // cached keys
  };
  Stats stats() const;

 private:
  struct State {
    StackSet stacks;  // canonical, counts clipped
    bool has_empty = false, has_live = false;
    std::unique_ptr<int32_t[]> next;  // 256 transitions; -2 unknown, -1 dead
  };
  struct Pending {
    int32_t token;
    uint16_t offset;  // bytes the key consumed before its rule ended
    uint16_t lcp;     // common prefix with the previous pending suffix
  };
  struct Entry {
    std::vector<uint64_t> bits;  // dense accepted set ...
    std::vector<int32_t> ids;    // ... or sparse
    std::vector<Pending> pending;  // sorted by suffix
    size_t max_suffix = 0;
    bool refine = false;  // too many pending tokens: use a longer key (nothing else is filled)
  };

  struct Keyed {
    std::span<const Frame> s;  // a stack of the matcher's state
    size_t k;                  // how many of its top frames form the key
  };
  static constexpr size_t kMaxPending = 256;  // more: refine the key with the frame under it

  void apply(std::vector<Keyed>& work, std::span<uint64_t> mask);
  uint32_t intern(StackSet& s);  // clips and canonicalizes s
  int32_t transition(uint32_t s, uint8_t b);
  const Entry& entry(uint32_t key, bool can_refine);
  void check_pending(const Entry& e, std::span<const Frame> below, std::span<uint64_t> mask);

  std::shared_ptr<const Grammar> g_;
  std::shared_ptr<const VocabTrie> vocab_;
  std::vector<int32_t> eog_;
  std::vector<SpecialToken> specials_;
  std::vector<std::string_view> special_bytes_;  // by id, for the specials
  uint32_t clip_;

  mutable std::mutex mu_;  // the caches below (one filter may serve several sequences)
  Stepper step_;
  std::vector<State> states_;
  std::unordered_map<std::string, uint32_t> intern_;
  std::unordered_map<uint32_t, Entry> entries_;
  StackSet tmp_;
  std::vector<Frame> tmp_frames_;
  std::vector<StackSet> depth_;
  std::vector<uint64_t> scratch_;
  std::string key_;
};

// One sequence's constraint: a matcher driven by the tokens it accepts, with a shared filter.
class Constraint {
 public:
  explicit Constraint(std::shared_ptr<TokenFilter> f) : f_(std::move(f)), m_(f_->grammar()) {}

  // The tokens allowed next (n_vocab bits). Never empty while the document can continue or end.
  void mask(std::span<uint64_t> bits) { f_->fill(m_, bits); }
  // Feeds a sampled token; false if the grammar does not allow it (state unchanged).
  bool accept(int32_t token);
  bool can_finish() const { return m_.can_finish(); }
  bool finished() const { return m_.finished(); }
  // Bytes still needed for a complete document (0: complete), and the same after `token`
  // (Grammar::kNoEnd if the grammar does not allow it; 0 for end-of-generation when complete).
  uint64_t distance() const { return m_.distance(); }
  uint64_t distance_after(int32_t token);
  // The tokens that start a shortest completion (TokenFilter::fill_shortest).
  void mask_shortest(std::span<uint64_t> bits) { f_->fill_shortest(m_, bits); }
  const TokenFilter& filter() const { return *f_; }
  Matcher& matcher() { return m_; }

 private:
  std::shared_ptr<TokenFilter> f_;
  Matcher m_;
};

}  // namespace nurl::grammar
