// Finishing a constrained document within a token budget (see budget.h).
#include "engine/runtime/budget.h"

#include <algorithm>
#include <vector>

namespace nurl {

namespace {

bool any_bit(std::span<const uint64_t> m) {
  return std::any_of(m.begin(), m.end(), [](uint64_t w) { return w != 0; });
}

// Whether the document can still be completed within the draws left after `token`: end of
// generation always can; content needs its distance in draws, plus one to end.
bool fits(grammar::Constraint& c, int32_t token, int64_t draws) {
  if (c.filter().is_eog(token)) return true;
  const uint64_t d = c.distance_after(token);
  return draws >= 2 && d <= static_cast<uint64_t>(draws - 2);
}

}  // namespace

Sample sample_within(Sampler& sampler, grammar::Constraint& c, std::span<const float> logits,
                     std::span<const uint64_t> mask, std::span<uint64_t> scratch, int64_t draws) {
  Sample s = sampler.sample(logits, mask);
  if (draws < 0 || fits(c, s.id, draws)) return s;
  c.mask_shortest(scratch);
  if (!any_bit(scratch)) return s;  // no token spells a shortest completion: as drawn
  return sampler.sample(logits, scratch);
}

int64_t shortest_document_tokens(grammar::Constraint c, int64_t cap) {
  std::vector<uint64_t> bits(c.filter().n_words());
  int64_t n = 0;
  while (c.distance() > 0 && n <= cap) {
    c.mask_shortest(bits);
    int32_t best = -1;
    size_t best_len = 0;
    for (size_t w = 0; w < bits.size(); ++w) {
      for (uint64_t x = bits[w]; x; x &= x - 1) {
        const auto id = static_cast<int32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(x)));
        const size_t len = c.filter().bytes_of(id).size();
        if (len > best_len) best = id, best_len = len;
      }
    }
    if (best < 0 || !c.accept(best)) return -1;
    ++n;
  }
  return n;
}

}  // namespace nurl
