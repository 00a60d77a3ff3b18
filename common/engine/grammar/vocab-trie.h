// A model's vocabulary as a byte trie, built once per model: token ids sorted by their bytes,
// and the trie's nodes in preorder so a walk is a forward scan that can jump over a subtree.
// Tokens with no bytes (control tokens, which print nothing) are not in the trie.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nurl::grammar {

class VocabTrie {
 public:
  // pieces[id]: the bytes token `id` adds to the output ("" = never allowed under a grammar).
  explicit VocabTrie(std::vector<std::string> pieces);

  struct Node {
    uint32_t end;        // index of the first node after this subtree
    uint32_t sub_begin;  // sorted() range of the tokens under this node ...
    uint32_t here_end;   // ... the first of which [sub_begin, here_end) end exactly here
    uint32_t sub_end;
    uint16_t depth;      // bytes from the root (1 for the first byte)
    uint8_t byte;
  };

  const std::vector<Node>& nodes() const { return nodes_; }
  std::span<const int32_t> sorted() const { return sorted_; }
  const std::string& piece(int32_t id) const { return pieces_[static_cast<size_t>(id)]; }
  int32_t n_vocab() const { return static_cast<int32_t>(pieces_.size()); }
  size_t max_len() const { return max_len_; }

 private:
  std::vector<std::string> pieces_;
  std::vector<int32_t> sorted_;
  std::vector<Node> nodes_;
  size_t max_len_ = 0;
};

}  // namespace nurl::grammar
