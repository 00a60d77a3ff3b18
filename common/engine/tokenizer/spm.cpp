// SentencePiece-style encoding of one text fragment (spaces already written as ▁).
// Start from single UTF-8 characters; repeatedly merge the adjacent pair whose concatenation is
// the vocabulary piece with the highest score (ties: leftmost first); characters that never
// became a piece are emitted as byte pieces <0xNN>. O(n log n) with a heap of candidate pairs;
// stale candidates (a side already merged) are skipped when popped.
#include <queue>

#include "engine/tokenizer/tokenizer-impl.h"

namespace nurl::tokenizer_detail {

namespace {

struct Symbol {
  uint32_t start;
  uint32_t n;  // 0 once merged into its left neighbour
  int32_t prev;
  int32_t next;
};

struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  uint32_t size;
};

struct BigramOrder {  // max-heap on score, then the leftmost pair first
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

size_t utf8_len(unsigned char b) {
  if (b < 0x80) return 1;
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 3;
  if ((b & 0xF8) == 0xF0) return 4;
  return 1;  // a stray continuation byte stands alone
}

}  // namespace

void spm_encode(const Tokenizer::Impl& t, std::string_view text, std::vector<int32_t>& out) {
  if (text.empty()) return;
  std::vector<Symbol> syms;
  syms.reserve(text.size());
  for (size_t off = 0; off < text.size();) {
    const size_t n = std::min(utf8_len(static_cast<unsigned char>(text[off])), text.size() - off);
    const auto idx = static_cast<int32_t>(syms.size());
    syms.push_back({static_cast<uint32_t>(off), static_cast<uint32_t>(n), idx - 1,
                    off + n == text.size() ? -1 : idx + 1});
    off += n;
  }

  std::vector<Bigram> storage;
  storage.reserve(syms.size());
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue(BigramOrder{},
                                                                      std::move(storage));
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t size = syms[left].n + syms[right].n;
    const int32_t id = t.find(text.substr(syms[left].start, size));
    if (id < 0) return;
    queue.push({t.tokens[id].score, left, right, size});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(syms.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = syms[b.left];
    Symbol& r = syms[b.right];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // stale
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  for (int32_t i = 0; i != -1; i = syms[i].next) {
    const Symbol& s = syms[i];
    const std::string_view piece = text.substr(s.start, s.n);
    const int32_t id = t.find(piece);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    for (const char c : piece) {  // byte fallback
      const int32_t b = t.byte_token[static_cast<unsigned char>(c)];
      if (b >= 0) {
        out.push_back(b);
      } else if (t.unk >= 0) {
        out.push_back(t.unk);
      }
    }
  }
}

}  // namespace nurl::tokenizer_detail
