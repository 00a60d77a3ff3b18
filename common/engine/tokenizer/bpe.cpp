// Byte-level BPE: GPT-2's byte <-> character mapping, the merge table and the encoder.
// A fragment is made valid UTF-8 (bad bytes -> U+FFFD, as llama.cpp does), split by the
// pre-tokenizer, and each piece is merged independently: start from one symbol per byte, repeatedly
// merge the adjacent pair with the lowest merge rank (ties: leftmost), emit the vocabulary ids.
// Pieces repeat a lot in real text, so each call keeps a small piece -> ids cache.
#include <queue>

#include "core/utf8.h"
#include "engine/tokenizer/tokenizer-impl.h"

namespace nurl::tokenizer_detail {

namespace {

// GPT-2 maps the 188 printable bytes (! .. ~, ¡ .. ¬, ® .. ÿ) to themselves and the other 68 bytes,
// in order, to U+0100, U+0101, ... so that every byte has a visible, non-space character.
struct ByteMap {
  static constexpr char32_t kMaxCp = 256 + 68;
  std::array<std::string, 256> text;
  std::array<int16_t, kMaxCp> back;  // mapped code point -> byte
  ByteMap() {
    back.fill(-1);
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const char32_t cp = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + extra++);
      utf8::append(text[b], cp);
      back[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap m;  // immutable after construction
  return m;
}

uint64_t pair_key(int32_t l, int32_t r) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
}

// Valid UTF-8 copy of s: each byte that does not start a well-formed character becomes U+FFFD.
std::string sanitize(std::string_view s) {
  if (utf8::valid(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) utf8::append(out, utf8::decode(s, i));
  return out;
}

struct Symbol {
  int32_t id;  // ext id, -1 when the byte's character is unknown to vocab and merges
  uint32_t start, len;
  int32_t prev, next;
};

struct Candidate {
  int32_t rank;
  int32_t left, right;
  int32_t left_id, right_id;
};

struct CandidateOrder {  // min-heap on rank, then leftmost
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

class WordEncoder {
 public:
  explicit WordEncoder(const Tokenizer::Impl& t) : t_(t) {}

  void encode(std::string_view word, std::vector<int32_t>& out) {
    if (t_.ignore_merges) {
      std::string mapped;
      for (const char c : word) mapped += bpe_byte_to_text(static_cast<uint8_t>(c));
      if (const int32_t id = t_.find(mapped); id >= 0) {
        out.push_back(id);
        return;
      }
    }
    syms_.clear();
    for (size_t i = 0; i < word.size(); ++i) {
      const auto idx = static_cast<int32_t>(i);
      syms_.push_back({t_.bpe.byte_symbol[static_cast<uint8_t>(word[i])], static_cast<uint32_t>(i),
                       1, idx - 1, i + 1 == word.size() ? -1 : idx + 1});
    }
    for (int32_t i = 1; i < static_cast<int32_t>(syms_.size()); ++i) add(i - 1, i);
    while (!heap_.empty()) {
      const Candidate c = heap_.top();
      heap_.pop();
      Symbol& l = syms_[c.left];
      Symbol& r = syms_[c.right];
      if (l.len == 0 || r.len == 0 || l.id != c.left_id || r.id != c.right_id) continue;
      l.id = t_.bpe.merges.find(pair_key(c.left_id, c.right_id))->result;
      l.len += r.len;
      r.len = 0;
      l.next = r.next;
      if (r.next >= 0) syms_[r.next].prev = c.left;
      add(l.prev, c.left);
      add(c.left, l.next);
    }
    const auto n_vocab = static_cast<int32_t>(t_.tokens.size());
    for (int32_t i = 0; i != -1 && !syms_.empty(); i = syms_[i].next) {
      const Symbol& s = syms_[i];
      if (s.id >= 0 && s.id < n_vocab) {
        out.push_back(s.id);
        continue;
      }
      // Not a vocabulary token: llama.cpp looks up each byte of the mapped text on its own.
      std::string mapped;
      for (uint32_t k = 0; k < s.len; ++k)
        mapped += bpe_byte_to_text(static_cast<uint8_t>(word[s.start + k]));
      for (const char c : mapped)
        if (const int32_t id = t_.find(std::string_view(&c, 1)); id >= 0) out.push_back(id);
    }
  }

 private:
  void add(int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const int32_t l = syms_[left].id, r = syms_[right].id;
    if (l < 0 || r < 0) return;
    const BpeTables::Merge* m = t_.bpe.merges.find(pair_key(l, r));
    if (m == nullptr) return;
    heap_.push({m->rank, left, right, l, r});
  }

  const Tokenizer::Impl& t_;
  std::vector<Symbol> syms_;
  std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> heap_;
};

}  // namespace

std::string_view bpe_byte_to_text(uint8_t b) { return byte_map().text[b]; }

bool bpe_text_to_bytes(std::string_view text, std::string& out) {
  const auto& back = byte_map().back;
  bool all = true;
  for (size_t i = 0; i < text.size();) {
    const size_t start = i;
    const char32_t cp = utf8::decode(text, i);
    if (cp >= ByteMap::kMaxCp || back[cp] < 0) {  // not a mapped character: keep its own bytes
      out.append(text.substr(start, i - start));
      all = false;
    } else {
      out += static_cast<char>(back[cp]);
    }
  }
  return all;
}

Result<void> bpe_build(Tokenizer::Impl& t, const std::vector<std::string_view>& merges) {
  const auto n_vocab = static_cast<int32_t>(t.tokens.size());
  StringMap ext_index;
  auto ext_id = [&](std::string_view s) -> int32_t {
    if (const int32_t id = t.find(s); id >= 0) return id;
    auto it = ext_index.find(s);
    if (it != ext_index.end()) return it->second;
    const auto id = n_vocab + static_cast<int32_t>(t.bpe.ext_text.size());
    t.bpe.ext_text.emplace_back(s);
    ext_index.emplace(std::string(s), id);
    return id;
  };
  t.bpe.merges.reserve(merges.size());
  std::string joined;
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string_view m = merges[i];
    const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
    if (sp == std::string_view::npos)
      return Error(Code::corrupt, "tokenizer.ggml.merges[" + std::to_string(i) + "] '" +
                                      std::string(m.substr(0, 64)) + "' is not 'left right'");
    const std::string_view left = m.substr(0, sp), right = m.substr(sp + 1);
    joined.assign(left);
    joined += right;
    const int32_t l = ext_id(left), r = ext_id(right), res = ext_id(joined);
    t.bpe.merges.emplace(pair_key(l, r), BpeTables::Merge{static_cast<int32_t>(i), res});
  }
  for (int b = 0; b < 256; ++b) {
    const std::string_view s = bpe_byte_to_text(static_cast<uint8_t>(b));
    int32_t id = t.find(s);
    if (id < 0) {
      auto it = ext_index.find(s);
      id = it == ext_index.end() ? -1 : it->second;
    }
    t.bpe.byte_symbol[b] = id;
  }
  return ok();
}

void bpe_encode(const Tokenizer::Impl& t, std::string_view fragment, std::vector<int32_t>& out) {
  if (fragment.empty()) return;
  const std::string text = sanitize(fragment);
  std::vector<Span> pieces;
  t.pre_tokenizer->split(text, pieces);

  // piece text -> [begin, end) in cache_ids
  std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> cache;
  std::vector<int32_t> cache_ids;
  WordEncoder enc(t);
  for (const Span& p : pieces) {
    const std::string_view word = std::string_view(text).substr(p.begin, p.end - p.begin);
    if (word.empty()) continue;
    auto it = cache.find(word);
    if (it == cache.end()) {
      const auto begin = static_cast<uint32_t>(cache_ids.size());
      enc.encode(word, cache_ids);
      it = cache.emplace(word, std::make_pair(begin, static_cast<uint32_t>(cache_ids.size()))).first;
    }
    out.insert(out.end(), cache_ids.begin() + it->second.first,
               cache_ids.begin() + it->second.second);
  }
}

}  // namespace nurl::tokenizer_detail
