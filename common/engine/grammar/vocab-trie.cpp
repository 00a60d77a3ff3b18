// Vocabulary trie (see vocab-trie.h): one pass over the sorted pieces, opening a node per new
// byte and closing the nodes deeper than the next piece's common prefix.
#include "engine/grammar/vocab-trie.h"

#include <algorithm>

namespace nurl::grammar {

VocabTrie::VocabTrie(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {
  for (size_t i = 0; i < pieces_.size(); ++i)
    if (!pieces_[i].empty() && pieces_[i].size() < 0xffff) sorted_.push_back(static_cast<int32_t>(i));
  std::stable_sort(sorted_.begin(), sorted_.end(),
                   [&](int32_t a, int32_t b) { return pieces_[static_cast<size_t>(a)] < pieces_[static_cast<size_t>(b)]; });
  std::vector<uint32_t> path;  // open nodes, by depth - 1
  auto close = [&](uint32_t idx) {
    nodes_[path.back()].end = static_cast<uint32_t>(nodes_.size());
    nodes_[path.back()].sub_end = idx;
    path.pop_back();
  };
  const std::string* prev = nullptr;
  for (size_t k = 0; k < sorted_.size(); ++k) {
    const std::string& p = pieces_[static_cast<size_t>(sorted_[k])];
    max_len_ = std::max(max_len_, p.size());
    size_t l = 0;
    if (prev)
      while (l < prev->size() && l < p.size() && (*prev)[l] == p[l]) ++l;
    while (path.size() > l) close(static_cast<uint32_t>(k));
    for (size_t d = l + 1; d <= p.size(); ++d) {
      Node n{};
      n.sub_begin = n.here_end = static_cast<uint32_t>(k);
      n.depth = static_cast<uint16_t>(d);
      n.byte = static_cast<uint8_t>(p[d - 1]);
      path.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back(n);
    }
    nodes_[path.back()].here_end = static_cast<uint32_t>(k + 1);
    prev = &p;
  }
  while (!path.empty()) close(static_cast<uint32_t>(sorted_.size()));
}

}  // namespace nurl::grammar
