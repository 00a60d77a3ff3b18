// SentencePiece-style encoding of one text fragment (spaces already written as ▁), as llama.cpp.
// Start from single UTF-8 characters; repeatedly merge the adjacent pair whose concatenation is
// the vocabulary piece with the highest score (ties: leftmost first); characters that never
// became a piece are emitted as byte pieces <0xNN>. O(n log n) with a heap of candidate pairs;
// stale candidates (a side already merged) are skipped when popped.
#include <algorithm>
#include <queue>
#include <unordered_map>

#include "core/utf8.h"

#include "engine/tokenizer/tokenizer-impl.h"

namespace nurl::tokenizer_detail {

namespace {

struct SpmSymbol {
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

class SpmWordEncoder {
 public:
  explicit SpmWordEncoder(const Tokenizer::Impl& t) : t_(t) {}

  void encode(std::string_view text, std::vector<int32_t>& out) {
    syms_.clear();
    for (size_t off = 0; off < text.size();) {
      const size_t n = std::min(utf8_len(static_cast<unsigned char>(text[off])), text.size() - off);
      const auto idx = static_cast<int32_t>(syms_.size());
      syms_.push_back({static_cast<uint32_t>(off), static_cast<uint32_t>(n), idx - 1,
                       off + n == text.size() ? -1 : idx + 1});
      off += n;
    }
    for (int32_t i = 1; i < static_cast<int32_t>(syms_.size()); ++i) try_add(text, i - 1, i);

    while (!queue_.empty()) {
      const Bigram b = queue_.top();
      queue_.pop();
      SpmSymbol& l = syms_[b.left];
      SpmSymbol& r = syms_[b.right];
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // stale
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) syms_[r.next].prev = b.left;
      try_add(text, l.prev, b.left);
      try_add(text, b.left, l.next);
    }

    for (int32_t i = 0; i != -1 && !syms_.empty(); i = syms_[i].next) {
      const SpmSymbol& s = syms_[i];
      const std::string_view piece = text.substr(s.start, s.n);
      const int32_t id = t_.find(piece);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
      for (const char c : piece) {  // byte fallback
        const int32_t b = t_.byte_token[static_cast<unsigned char>(c)];
        if (b >= 0) {
          out.push_back(b);
        } else if (t_.unk >= 0) {
          out.push_back(t_.unk);
        }
      }
    }
  }

 private:
  void try_add(std::string_view text, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t size = syms_[left].n + syms_[right].n;
    const int32_t id = t_.find(text.substr(syms_[left].start, size));
    if (id < 0) return;
    queue_.push({t_.tokens[id].score, left, right, size});
  }

  const Tokenizer::Impl& t_;
  std::vector<SpmSymbol> syms_;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue_;
};

constexpr std::string_view kSpace = "\xE2\x96\x81";

}  // namespace

void spm_encode(const Tokenizer::Impl& t, std::string_view text, std::vector<int32_t>& out) {
  if (text.empty()) return;
  // Words (cut before a ▁ that no piece can glue to its left neighbour) are merged
  // independently: no candidate pair ever spans a cut, so this equals merging the whole text.
  // Words repeat, so each call keeps a word -> ids cache.
  std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> cache;
  std::vector<int32_t> cache_ids;
  SpmWordEncoder enc(t);
  auto emit = [&](std::string_view word) {
    auto it = cache.find(word);
    if (it == cache.end()) {
      const auto begin = static_cast<uint32_t>(cache_ids.size());
      enc.encode(word, cache_ids);
      it = cache.emplace(word, std::make_pair(begin, static_cast<uint32_t>(cache_ids.size()))).first;
    }
    out.insert(out.end(), cache_ids.begin() + it->second.first, cache_ids.begin() + it->second.second);
  };
  const auto& glue = t.spm_glue_before_space;
  size_t start = 0, prev = 0;
  for (size_t i = 0; i < text.size();) {
    if (i > start && text.compare(i, kSpace.size(), kSpace) == 0) {
      size_t j = prev;
      const char32_t c = utf8::decode(text.substr(0, i), j);
      if (j == i && c != 0xFFFD && !std::binary_search(glue.begin(), glue.end(), c)) {
        emit(text.substr(start, i - start));
        start = i;
      }
    }
    prev = i;
    i += std::min(utf8_len(static_cast<unsigned char>(text[i])), text.size() - i);
  }
  emit(text.substr(start));
}

}  // namespace nurl::tokenizer_detail
