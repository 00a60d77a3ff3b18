// Pattern compiler (see regex.h): UTF-8 decode → parse into a small AST → rules over the bytes of
// the JSON-encoded string content.
#include "engine/grammar/regex.h"

#include <algorithm>
#include <string>

namespace nurl::grammar {

namespace {

constexpr uint32_t kMaxCode = 0x10FFFF;
constexpr uint32_t kMaxCount = 10000;  // {n,m} bounds beyond this are refused (bounded compile)

Error bad(std::string_view pattern, const std::string& what) {
  return Error(Code::invalid_argument, "pattern \"" + std::string(pattern) + "\": " + what);
}

CodeRanges normalize(CodeRanges r) {
  std::sort(r.begin(), r.end());
  CodeRanges out;
  for (auto [lo, hi] : r) {
    if (lo > hi) continue;
    if (!out.empty() && lo <= out.back().second + 1) out.back().second = std::max(out.back().second, hi);
    else out.push_back({lo, hi});
  }
  return out;
}

CodeRanges complement(const CodeRanges& r) {
  CodeRanges out;
  uint32_t next = 0;
  for (auto [lo, hi] : normalize(r)) {
    if (lo > next) out.push_back({next, lo - 1});
    next = hi + 1;
  }
  if (next <= kMaxCode) out.push_back({next, kMaxCode});
  return out;
}

CodeRanges digit_ranges() { return {{'0', '9'}}; }
CodeRanges word_ranges() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
CodeRanges space_ranges() {
  return {{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029},
          {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}
CodeRanges dot_ranges() { return complement({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}); }

int encode_utf8(uint32_t c, uint8_t* out) {
  if (c < 0x80) {
    out[0] = static_cast<uint8_t>(c);
    return 1;
  }
  if (c < 0x800) {
    out[0] = static_cast<uint8_t>(0xC0 | (c >> 6));
    out[1] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = static_cast<uint8_t>(0xE0 | (c >> 12));
    out[1] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
    out[2] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = static_cast<uint8_t>(0xF0 | (c >> 18));
  out[1] = static_cast<uint8_t>(0x80 | ((c >> 12) & 0x3F));
  out[2] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
  out[3] = static_cast<uint8_t>(0x80 | (c & 0x3F));
  return 4;
}

using ByteRanges = std::vector<std::pair<uint8_t, uint8_t>>;

// Code points lo..hi, all of one encoded length, as byte-range sequences: split until the two
// ends differ only in whole trailing-byte ranges.
void split_same_length(uint32_t lo, uint32_t hi, int len, std::vector<ByteRanges>& out) {
  for (int i = 1; i < len; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) == (hi & ~m)) continue;
    if ((lo & m) != 0) {
      split_same_length(lo, lo | m, len, out);
      split_same_length((lo | m) + 1, hi, len, out);
      return;
    }
    if ((hi & m) != m) {
      split_same_length(lo, (hi & ~m) - 1, len, out);
      split_same_length(hi & ~m, hi, len, out);
      return;
    }
  }
  uint8_t a[4], b[4];
  encode_utf8(lo, a);
  encode_utf8(hi, b);
  ByteRanges seq;
  for (int k = 0; k < len; ++k) seq.push_back({a[k], b[k]});
  out.push_back(std::move(seq));
}

void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<ByteRanges>& out) {
  static constexpr uint32_t kEnd[] = {0x7F, 0x7FF, 0xFFFF, kMaxCode};
  for (int n = 0; n < 4; ++n) {
    const uint32_t base = n == 0 ? 0 : kEnd[n - 1] + 1;
    if (hi < base || lo > kEnd[n]) continue;
    split_same_length(std::max(lo, base), std::min(hi, kEnd[n]), n + 1, out);
  }
}

std::string json_escape_of(uint32_t c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: {
      const char* h = "0123456789abcdef";
      return std::string("\\u00") + h[(c >> 4) & 15] + h[c & 15];
    }
  }
}

// --- parser -------------------------------------------------------------------------------

struct Node {
  enum Kind { empty, cls, cat, alt, rep } kind = empty;
  CodeRanges ranges;        // cls
  std::vector<Node> kids;   // cat, alt, rep (one)
  uint32_t min = 0, max = 0;  // rep
};

bool nullable(const Node& n) {
  switch (n.kind) {
    case Node::empty: return true;
    case Node::cls: return false;
    case Node::cat: return std::all_of(n.kids.begin(), n.kids.end(), nullable);
    case Node::alt: return std::any_of(n.kids.begin(), n.kids.end(), nullable);
    case Node::rep: return n.min == 0 || nullable(n.kids[0]);
  }
  return true;
}

class Parser {
 public:
  Parser(std::string_view src, std::vector<uint32_t> cps) : src_(src), c_(std::move(cps)) {}

  struct Branch {
    Node node;
    bool start = false, end = false;  // anchored
  };

  Result<std::vector<Branch>> top() {
    std::vector<Branch> out;
    while (true) {
      Branch b;
      if (peek('^')) ++i_, b.start = true;
      NURL_ASSIGN(b.node, cat(true, &b.end));
      out.push_back(std::move(b));
      if (i_ == c_.size()) break;
      if (peek('|')) {
        ++i_;
        continue;
      }
      return bad(src_, "unbalanced ')'");
    }
    return out;
  }

 private:
  bool peek(uint32_t ch) const { return i_ < c_.size() && c_[i_] == ch; }

  Result<Node> alternation() {
    Node a;
    a.kind = Node::alt;
    while (true) {
      NURL_ASSIGN(Node n, cat(false, nullptr));
      a.kids.push_back(std::move(n));
      if (!peek('|')) break;
      ++i_;
    }
    if (a.kids.size() == 1) return std::move(a.kids[0]);
    return a;
  }

  Result<Node> cat(bool top, bool* anchored_end) {
    Node n;
    n.kind = Node::cat;
    while (i_ < c_.size() && !peek('|') && !peek(')')) {
      if (peek('$')) {
        if (top && (i_ + 1 == c_.size() || c_[i_ + 1] == '|')) {
          ++i_;
          *anchored_end = true;
          break;
        }
        return bad(src_, "'$' is only supported at the end of the pattern");
      }
      if (peek('^')) return bad(src_, "'^' is only supported at the start of the pattern");
      NURL_ASSIGN(Node atom, repeat());
      n.kids.push_back(std::move(atom));
    }
    if (n.kids.size() == 1) return std::move(n.kids[0]);
    if (n.kids.empty()) n.kind = Node::empty;
    return n;
  }

  // {n}, {n,}, {n,m} at i_; false (and i_ unchanged) when it is not a quantifier.
  bool braces(uint32_t& lo, uint32_t& hi) {
    size_t j = i_ + 1;
    auto number = [&](uint32_t& v) {
      size_t s = j;
      uint64_t x = 0;
      while (j < c_.size() && c_[j] >= '0' && c_[j] <= '9') x = std::min<uint64_t>(x * 10 + (c_[j++] - '0'), 1u << 30);
      v = static_cast<uint32_t>(x);
      return j > s;
    };
    if (!number(lo)) return false;
    hi = lo;
    if (j < c_.size() && c_[j] == ',') {
      ++j;
      if (!number(hi)) hi = kUnbounded;
    }
    if (j >= c_.size() || c_[j] != '}') return false;
    i_ = j + 1;
    return true;
  }

  Result<Node> repeat() {
    NURL_ASSIGN(Node atom, primary());
    while (i_ < c_.size()) {
      uint32_t lo = 0, hi = 0;
      const uint32_t ch = c_[i_];
      if (ch == '*') lo = 0, hi = kUnbounded, ++i_;
      else if (ch == '+') lo = 1, hi = kUnbounded, ++i_;
      else if (ch == '?') lo = 0, hi = 1, ++i_;
      else if (ch == '{') {
        if (!braces(lo, hi)) break;
      } else {
        break;
      }
      if (peek('?')) ++i_;  // lazy: the same set of strings
      if (hi != kUnbounded && hi < lo) return bad(src_, "quantifier {n,m} with m < n");
      if (lo > kMaxCount || (hi != kUnbounded && hi > kMaxCount))
        return bad(src_, "quantifier bound above " + std::to_string(kMaxCount));
      if (atom.kind == Node::empty) continue;
      Node r;
      r.kind = Node::rep;
      r.min = lo;
      r.max = hi;
      r.kids.push_back(std::move(atom));
      atom = std::move(r);
    }
    return atom;
  }

  Result<uint32_t> hex(size_t n) {
    uint32_t v = 0;
    for (size_t k = 0; k < n; ++k) {
      if (i_ >= c_.size()) return bad(src_, "incomplete hex escape");
      const uint32_t ch = c_[i_++];
      int d = ch >= '0' && ch <= '9' ? static_cast<int>(ch - '0')
              : ch >= 'a' && ch <= 'f' ? static_cast<int>(ch - 'a' + 10)
              : ch >= 'A' && ch <= 'F' ? static_cast<int>(ch - 'A' + 10)
                                       : -1;
      if (d < 0) return bad(src_, "bad hex escape");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }

  // After a backslash: a class escape (\d ...) into `set`, or one code point.
  Result<bool> escape(CodeRanges& set, uint32_t& cp, bool in_class) {
    if (i_ >= c_.size()) return bad(src_, "trailing backslash");
    const uint32_t ch = c_[i_++];
    switch (ch) {
      case 'd': set = digit_ranges(); return true;
      case 'D': set = complement(digit_ranges()); return true;
      case 'w': set = word_ranges(); return true;
      case 'W': set = complement(word_ranges()); return true;
      case 's': set = space_ranges(); return true;
      case 'S': set = complement(space_ranges()); return true;
      case 't': cp = '\t'; return false;
      case 'n': cp = '\n'; return false;
      case 'r': cp = '\r'; return false;
      case 'f': cp = '\f'; return false;
      case 'v': cp = '\v'; return false;
      case '0': cp = 0; return false;
      case 'x': {
        NURL_ASSIGN(cp, hex(2));
        return false;
      }
      case 'u': {
        NURL_ASSIGN(cp, hex(4));
        if (cp >= 0xD800 && cp <= 0xDFFF) return bad(src_, "surrogate \\u escapes are not supported");
        return false;
      }
      case 'b':
        if (in_class) {
          cp = '\b';
          return false;
        }
        return bad(src_, "word boundaries (\\b) are not supported");
      case 'B': return bad(src_, "word boundaries (\\B) are not supported");
      case 'p':
      case 'P': return bad(src_, "Unicode property escapes (\\p{...}) are not supported");
      case 'k': return bad(src_, "named backreferences are not supported");
      case 'c': return bad(src_, "control escapes (\\cX) are not supported");
      default:
        if (ch >= '1' && ch <= '9') return bad(src_, "backreferences are not supported");
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
          return bad(src_, std::string("unknown escape \\") + static_cast<char>(ch));
        cp = ch;  // escaped punctuation stands for itself
        return false;
    }
  }

  Result<Node> klass() {
    Node n;
    n.kind = Node::cls;
    bool negate = false;
    if (peek('^')) ++i_, negate = true;
    CodeRanges set;
    while (true) {
      if (i_ >= c_.size()) return bad(src_, "unterminated character class");
      if (peek(']')) {
        ++i_;
        break;
      }
      CodeRanges sub;
      uint32_t lo = 0;
      if (peek('\\')) {
        ++i_;
        NURL_ASSIGN(bool is_set, escape(sub, lo, true));
        if (is_set) {
          set.insert(set.end(), sub.begin(), sub.end());
          continue;
        }
      } else {
        lo = c_[i_++];
      }
      uint32_t hi = lo;
      if (peek('-') && i_ + 1 < c_.size() && c_[i_ + 1] != ']') {
        ++i_;
        if (peek('\\')) {
          ++i_;
          NURL_ASSIGN(bool is_set, escape(sub, hi, true));
          if (is_set) return bad(src_, "a class escape cannot end a range");
        } else {
          hi = c_[i_++];
        }
        if (hi < lo) return bad(src_, "character range out of order");
      }
      set.push_back({lo, hi});
    }
    n.ranges = negate ? complement(set) : normalize(set);
    return n;
  }

  Result<Node> primary() {
    const uint32_t ch = c_[i_];
    if (ch == '(') {
      ++i_;
      if (peek('?')) {
        ++i_;
        if (peek(':')) {
          ++i_;
        } else if (peek('<') && i_ + 1 < c_.size() && c_[i_ + 1] != '=' && c_[i_ + 1] != '!') {
          while (i_ < c_.size() && c_[i_] != '>') ++i_;
          if (i_ >= c_.size()) return bad(src_, "unterminated group name");
          ++i_;
        } else {
          return bad(src_, "lookaround assertions are not supported");
        }
      }
      NURL_ASSIGN(Node inner, alternation());
      if (!peek(')')) return bad(src_, "missing ')'");
      ++i_;
      return inner;
    }
    if (ch == '[') {
      ++i_;
      return klass();
    }
    if (ch == '*' || ch == '+' || ch == '?') return bad(src_, "nothing to repeat");
    Node n;
    n.kind = Node::cls;
    ++i_;
    if (ch == '.') {
      n.ranges = dot_ranges();
    } else if (ch == '\\') {
      uint32_t cp = 0;
      NURL_ASSIGN(bool is_set, escape(n.ranges, cp, false));
      if (!is_set) n.ranges = {{cp, cp}};
    } else {
      n.ranges = {{ch, ch}};
    }
    return n;
  }

  std::string_view src_;
  std::vector<uint32_t> c_;
  size_t i_ = 0;
};

Result<std::vector<uint32_t>> decode(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<uint8_t>(s[i]);
    int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + static_cast<size_t>(n) > s.size()) return Error(Code::invalid_argument, "pattern is not valid UTF-8");
    uint32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < n; ++k) {
      const auto x = static_cast<uint8_t>(s[i + static_cast<size_t>(k)]);
      if ((x & 0xC0) != 0x80) return Error(Code::invalid_argument, "pattern is not valid UTF-8");
      c = (c << 6) | (x & 0x3F);
    }
    out.push_back(c);
    i += static_cast<size_t>(n);
  }
  return out;
}

class Compiler {
 public:
  Compiler(Builder& b, std::string name, bool raw, CodeRanges excluded)
      : b_(b), name_(std::move(name)), raw_(raw), excluded_(std::move(excluded)) {}

  Seq compile(const Node& n) {
    switch (n.kind) {
      case Node::empty: return {};
      case Node::cls: return {class_item(n.ranges)};
      case Node::cat: {
        Seq out;
        for (const Node& k : n.kids) {
          Seq s = compile(k);
          out.insert(out.end(), s.begin(), s.end());
        }
        return out;
      }
      case Node::alt: {
        std::vector<Seq> alts;
        for (const Node& k : n.kids) alts.push_back(compile(k));
        return {b_.ref(b_.rule(next_name(), std::move(alts)))};
      }
      case Node::rep: {
        Seq body = compile(n.kids[0]);
        if (n.max == 0) return {};
        if (n.min == 0 && n.max == 1) return {b_.optional(std::move(body), next_name())};
        if (n.min == 1 && n.max == 1) return body;
        return {b_.repeat(std::move(body), n.min, n.max, next_name())};
      }
    }
    return {};
  }

 private:
  Item class_item(CodeRanges r) {
    if (!excluded_.empty()) {  // r minus the excluded code points
      CodeRanges keep;
      for (auto [lo, hi] : normalize(r))
        for (auto [a, z] : complement(excluded_))
          if (std::max(lo, a) <= std::min(hi, z)) keep.push_back({std::max(lo, a), std::min(hi, z)});
      r = keep;
    }
    if (r.size() == 1 && r[0].first == r[0].second && r[0].first >= 0x20 && r[0].first < 0x80 &&
        (raw_ || (r[0].first != '"' && r[0].first != '\\')))
      return b_.byte(static_cast<uint8_t>(r[0].first));
    return b_.ref(b_.rule(next_name(), raw_ ? utf8_char_class(b_, r) : json_char_class(b_, r)));
  }
  std::string next_name() { return name_ + "-" + std::to_string(++n_); }

  Builder& b_;
  std::string name_;
  bool raw_;
  CodeRanges excluded_;
  int n_ = 0;
};

}  // namespace

namespace {

void add_utf8(Builder& b, const CodeRanges& clean, std::vector<Seq>& alts) {
  for (auto [lo, hi] : clean) {
    std::vector<ByteRanges> seqs;
    utf8_sequences(lo, hi, seqs);
    for (const ByteRanges& br : seqs) {
      Seq s;
      for (auto [x, y] : br) s.push_back(b.bytes(ByteSet::range(x, y)));
      alts.push_back(std::move(s));
    }
  }
}

CodeRanges without_surrogates(const CodeRanges& r) {
  CodeRanges out;
  for (auto [lo, hi] : r) {
    if (lo <= 0xDFFF && hi >= 0xD800) {
      if (lo < 0xD800) out.push_back({lo, 0xD7FF});
      if (hi > 0xDFFF) out.push_back({0xE000, hi});
    } else {
      out.push_back({lo, hi});
    }
  }
  return out;
}

}  // namespace

std::vector<Seq> utf8_char_class(Builder& b, CodeRanges ranges) {
  std::vector<Seq> alts;
  add_utf8(b, without_surrogates(normalize(std::move(ranges))), alts);
  return alts;
}

std::vector<Seq> json_char_class(Builder& b, CodeRanges ranges) {
  ranges = normalize(std::move(ranges));
  // JSON specials are written as escapes; the rest is UTF-8, surrogates excluded.
  std::vector<Seq> alts;
  CodeRanges clean;
  auto keep = [&](uint32_t lo, uint32_t hi) {
    if (lo > hi) return;
    if (lo <= 0xDFFF && hi >= 0xD800) {
      if (lo < 0xD800) clean.push_back({lo, 0xD7FF});
      if (hi > 0xDFFF) clean.push_back({0xE000, hi});
    } else {
      clean.push_back({lo, hi});
    }
  };
  for (auto [lo, hi] : ranges) {
    for (uint32_t c = lo; c <= std::min<uint32_t>(hi, 0x1F); ++c) alts.push_back(b.literal(json_escape_of(c)));
    uint32_t a = std::max<uint32_t>(lo, 0x20);
    for (uint32_t cut : {0x22u, 0x5Cu}) {
      if (cut < a || cut > hi) continue;
      alts.push_back(b.literal(json_escape_of(cut)));
      keep(a, cut - 1);
      a = cut + 1;
    }
    keep(a, hi);
  }
  add_utf8(b, clean, alts);
  return alts;
}

Result<RuleId> compile_pattern(Builder& b, std::string_view pattern, RuleId any_char, std::string_view name, bool raw,
                               const CodeRanges& excluded) {
  NURL_ASSIGN(std::vector<uint32_t> cps, decode(pattern));
  Parser p(pattern, std::move(cps));
  NURL_ASSIGN(std::vector<Parser::Branch> branches, p.top());
  // Nullable repetition bodies cannot be expressed as counted repetitions.
  auto check = [&](auto& self, const Node& n) -> Result<void> {
    if (n.kind == Node::rep && n.max > 1 && nullable(n.kids[0]))
      return bad(pattern, "a repeated group that can match the empty string is not supported");
    for (const Node& k : n.kids) NURL_TRY(self(self, k));
    return ok();
  };
  Compiler c(b, std::string(name), raw, excluded);
  std::vector<Seq> alts;
  for (const auto& br : branches) {
    NURL_TRY(check(check, br.node));
    Seq s;
    if (!br.start) s.push_back(b.repeat(any_char, 0, kUnbounded));
    Seq body = c.compile(br.node);
    s.insert(s.end(), body.begin(), body.end());
    if (!br.end) s.push_back(b.repeat(any_char, 0, kUnbounded));
    alts.push_back(std::move(s));
  }
  return b.rule(std::string(name), std::move(alts));
}

}  // namespace nurl::grammar
