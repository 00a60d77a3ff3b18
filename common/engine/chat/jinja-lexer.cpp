// Jinja2's lexer, rule for rule: root text scanning with lstrip/strip signs, tag tokens with
// brace balancing (a `}}` inside an open `{` is two operators), comments and raw blocks.
#include "engine/chat/jinja-lexer.h"

#include <algorithm>

#include "core/utf8.h"
#include "engine/chat/py-string.h"

namespace nurl::jinja {

namespace {

// Python's str.splitlines() + "\n".join(): every line boundary becomes "\n" and one trailing
// line boundary disappears (Jinja2's keep_trailing_newline=False).
std::string normalize_newlines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    char32_t c = utf8::decode(s, i);
    if (py::is_line_break(c)) {
      if (c == '\r' && i < s.size() && s[i] == '\n') ++i;
      out += '\n';
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  Result<std::vector<Token>> run() {
    bool line_starting = true;
    size_t pos = 0;
    while (pos < src_.size()) {
      size_t open = find_open(pos);
      std::string text = src_.substr(pos, open - pos);
      if (open == src_.size()) {
        push(Tok::text, std::move(text), pos);
        break;
      }
      const char kind = src_[open + 1];  // '{', '%' or '#'
      size_t p = open + 2;
      char sign = 0;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
      // Raw blocks are recognised at the opening tag, before any other rule.
      size_t raw_end = 0;
      const bool raw = kind == '%' && match_raw_begin(p, raw_end);
      text = strip_before(std::move(text), sign, kind != '{', line_starting);
      push(Tok::text, std::move(text), pos);
      if (raw) {
        NURL_ASSIGN(pos, lex_raw(raw_end, open, line_starting));
        continue;
      }
      if (kind == '#') {
        NURL_ASSIGN(pos, lex_comment(p, open, line_starting));
        continue;
      }
      push(kind == '{' ? Tok::var_begin : Tok::block_begin, "", open);
      NURL_ASSIGN(pos, lex_tag(p, kind == '%', open, line_starting));
    }
    push(Tok::eof, "", src_.size());
    return std::move(tokens_);
  }

 private:
  std::string src_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;

  void position(size_t pos, int& line, int& col) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
    const size_t idx = static_cast<size_t>(it - line_starts_.begin()) - 1;
    line = static_cast<int>(idx) + 1;
    col = static_cast<int>(pos - line_starts_[idx]) + 1;
  }

  Error fail(size_t pos, const std::string& msg) const {
    int line, col;
    position(pos, line, col);
    return Error(Code::invalid_argument,
                 "template syntax error at line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + msg);
  }

  void push(Tok t, std::string value, size_t pos) {
    if (t == Tok::text && value.empty()) return;
    Token tok;
    tok.type = t;
    tok.value = std::move(value);
    position(pos, tok.line, tok.col);
    tokens_.push_back(std::move(tok));
  }

  size_t find_open(size_t pos) const {
    for (size_t i = pos; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return src_.size();
  }

  size_t skip_space(size_t p) const {
    while (p < src_.size()) {
      size_t q = p;
      char32_t c = utf8::decode(src_, q);
      if (!py::is_space(c)) break;
      p = q;
    }
    return p;
  }

  bool starts_with(size_t p, std::string_view s) const { return src_.compare(p, s.size(), s) == 0; }

  // `{%(-|+|)\s*raw\s*(-%}\s*|%})`: note there is no trim_blocks newline after `raw %}`.
  bool match_raw_begin(size_t p, size_t& end) const {
    size_t q = skip_space(p);
    if (!starts_with(q, "raw")) return false;
    q = skip_space(q + 3);
    if (starts_with(q, "-%}")) {
      end = skip_space(q + 3);
      return true;
    }
    if (starts_with(q, "%}")) {
      end = q + 2;
      return true;
    }
    return false;
  }

  // Jinja2's OptionalLStrip: '-' strips all trailing whitespace of the text; otherwise, for block
  // and comment tags, lstrip_blocks removes a run of spaces/tabs between a line start and the tag.
  static std::string strip_before(std::string text, char sign, bool lstrip_kind, bool line_starting) {
    if (sign == '-') return py::strip(text, std::nullopt, false, true);
    if (sign == '+' || !lstrip_kind) return text;
    const size_t nl = text.rfind('\n');
    const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
    if (l_pos == 0 && !line_starting) return text;
    for (size_t i = l_pos; i < text.size(); ++i)
      if (text[i] != ' ' && text[i] != '\t') return text;
    text.resize(l_pos);
    return text;
  }

  // A block end at p: `+%}`, `-%}\s*` or `%}\n?` (trim_blocks). Returns the end or 0.
  size_t block_end_at(size_t p, bool block) const {
    if (block) {
      if (starts_with(p, "+%}")) return p + 3;
      if (starts_with(p, "-%}")) return skip_space(p + 3);
      if (starts_with(p, "%}")) return p + 2 + (starts_with(p + 2, "\n") ? 1 : 0);
      return 0;
    }
    if (starts_with(p, "-}}")) return skip_space(p + 3);
    if (starts_with(p, "}}")) return p + 2;
    return 0;
  }

  Result<size_t> lex_comment(size_t p, size_t open, bool& line_starting) {
    size_t j = src_.find("#}", p);
    if (j == std::string::npos) return fail(open, "missing end of comment tag");
    size_t end;
    if (j > p && src_[j - 1] == '-')
      end = skip_space(j + 2);
    else if (j > p && src_[j - 1] == '+')
      end = j + 2;
    else
      end = j + 2 + (starts_with(j + 2, "\n") ? 1 : 0);
    line_starting = end > 0 && src_[end - 1] == '\n';
    return end;
  }

  Result<size_t> lex_raw(size_t p, size_t open, bool& line_starting) {
    // Body up to `{%(-|+|)\s*endraw\s*(+%}|-%}\s*|%}\n?)`, with the same strip rules as text.
    for (size_t i = p; i + 1 < src_.size(); ++i) {
      if (src_[i] != '{' || src_[i + 1] != '%') continue;
      size_t q = i + 2;
      char sign = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) sign = src_[q++];
      q = skip_space(q);
      if (!starts_with(q, "endraw")) continue;
      q = skip_space(q + 6);
      size_t end = block_end_at(q, true);
      if (end == 0) continue;
      push(Tok::text, strip_before(src_.substr(p, i - p), sign, true, false), p);
      line_starting = src_[end - 1] == '\n';
      return end;
    }
    return fail(open, "missing end of raw directive");
  }

  Result<size_t> lex_tag(size_t p, bool block, size_t open, bool& line_starting) {
    std::vector<char> balance;
    while (true) {
      p = skip_space(p);
      if (p >= src_.size()) return fail(open, std::string("unexpected end of template, expected '") + (block ? "%}" : "}}") + "'");
      if (balance.empty()) {
        if (size_t end = block_end_at(p, block)) {
          push(block ? Tok::block_end : Tok::var_end, "", p);
          line_starting = src_[end - 1] == '\n';
          return end;
        }
      }
      const char c = src_[p];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        p = lex_number(p);
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t q = p;
        while (q < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[q])) || src_[q] == '_')) ++q;
        push(Tok::name, src_.substr(p, q - p), p);
        p = q;
        continue;
      }
      if (c == '\'' || c == '"') {
        NURL_ASSIGN(p, lex_string(p));
        continue;
      }
      static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
      bool two = false;
      for (auto op : kTwo)
        if (starts_with(p, op)) {
          push(Tok::op, std::string(op), p);
          p += 2;
          two = true;
          break;
        }
      if (two) continue;
      if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos)
        return fail(p, std::string("unexpected char '") + c + "'");
      if (c == '(' || c == '[' || c == '{') {
        balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
      } else if (c == ')' || c == ']' || c == '}') {
        if (balance.empty()) return fail(p, std::string("unexpected '") + c + "'");
        if (balance.back() != c)
          return fail(p, std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
        balance.pop_back();
      }
      push(Tok::op, std::string(1, c), p);
      ++p;
    }
  }

  // Digits with '_' separators; a float needs a fraction and/or an exponent.
  size_t digits(size_t p) const {
    while (p < src_.size() &&
           (std::isdigit(static_cast<unsigned char>(src_[p])) ||
            (src_[p] == '_' && p + 1 < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p + 1])))))
      ++p;
    return p;
  }

  size_t lex_number(size_t p) {
    size_t q = digits(p);
    bool is_float = false;
    if (q + 1 < src_.size() && src_[q] == '.' && std::isdigit(static_cast<unsigned char>(src_[q + 1]))) {
      q = digits(q + 1);
      is_float = true;
    }
    if (q < src_.size() && (src_[q] == 'e' || src_[q] == 'E')) {
      size_t r = q + 1;
      if (r < src_.size() && (src_[r] == '+' || src_[r] == '-')) ++r;
      if (r < src_.size() && std::isdigit(static_cast<unsigned char>(src_[r]))) {
        q = digits(r);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = p; i < q; ++i)
      if (src_[i] != '_') text += src_[i];
    push(is_float ? Tok::floating : Tok::integer, std::move(text), p);
    return q;
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // A quoted literal, unescaped as Python's "unicode-escape" codec does.
  Result<size_t> lex_string(size_t p) {
    const char quote = src_[p];
    std::string out;
    size_t i = p + 1;
    while (true) {
      if (i >= src_.size()) return fail(p, "unterminated string");
      const char c = src_[i];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) return fail(p, "unterminated string");
      const char e = src_[i + 1];
      i += 2;
      switch (e) {
        case '\n': break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
          const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int k = 0; k < n; ++k) {
            const int h = i + static_cast<size_t>(k) < src_.size() ? hex_value(src_[i + static_cast<size_t>(k)]) : -1;
            if (h < 0) return fail(p, std::string("truncated \\") + e + " escape in string");
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          if (cp > 0x10FFFF) return fail(p, "illegal Unicode character in string escape");
          i += static_cast<size_t>(n);
          utf8::append(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && i < src_.size() && src_[i] >= '0' && src_[i] <= '7'; ++k, ++i)
              cp = cp * 8 + static_cast<uint32_t>(src_[i] - '0');
            utf8::append(out, cp);
          } else {
            out += '\\';  // unknown escapes stay as written
            out += e;
          }
      }
    }
    push(Tok::string, std::move(out), p);
    return i + 1;
  }
};

}  // namespace

Result<std::vector<Token>> lex(std::string_view source) { return Lexer(normalize_newlines(source)).run(); }

}  // namespace nurl::jinja
