// Python str semantics over UTF-8. Byte-level fast paths where UTF-8 makes them exact
// (find/replace/split on a separator work on bytes because UTF-8 is self-synchronising).
#include "engine/chat/py-string.h"

#include "core/utf8.h"

namespace nurl::jinja::py {

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out.push_back(utf8::decode(s, i));
  return out;
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) utf8::append(out, c);
  return out;
}

bool is_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

size_t length(std::string_view s) {
  if (is_ascii(s)) return s.size();
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) utf8::decode(s, i);
  return n;
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
         c == 0x2028 || c == 0x2029;
}

namespace {

// Pairs laid out as (upper, lower) alternating: even = upper when `even_upper`.
bool in_pair_range(char32_t c, char32_t lo, char32_t hi) { return c >= lo && c <= hi; }

}  // namespace

char32_t to_upper(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;
  if (in_pair_range(c, 0x100, 0x137) || in_pair_range(c, 0x14A, 0x177)) return (c & 1) ? c - 1 : c;
  if (in_pair_range(c, 0x139, 0x148) || in_pair_range(c, 0x179, 0x17E)) return (c & 1) ? c : c - 1;
  if (c == 0x131) return 'I';
  if (c == 0x17F) return 'S';
  if (c >= 0x3B1 && c <= 0x3C9) return c == 0x3C2 ? 0x3A3 : c - 32;
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  if (in_pair_range(c, 0x460, 0x481) || in_pair_range(c, 0x48A, 0x4BF) || in_pair_range(c, 0x4D0, 0x4FF))
    return (c & 1) ? c - 1 : c;
  if (c >= 0xFF41 && c <= 0xFF5A) return c - 32;
  return c;
}

char32_t to_lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (c == 0x178) return 0xFF;
  if (in_pair_range(c, 0x100, 0x137) || in_pair_range(c, 0x14A, 0x177)) return (c & 1) ? c : c + 1;
  if (in_pair_range(c, 0x139, 0x148) || in_pair_range(c, 0x179, 0x17E)) return (c & 1) ? c + 1 : c;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (in_pair_range(c, 0x460, 0x481) || in_pair_range(c, 0x48A, 0x4BF) || in_pair_range(c, 0x4D0, 0x4FF))
    return (c & 1) ? c : c + 1;
  if (c >= 0xFF21 && c <= 0xFF3A) return c + 32;
  return c;
}

bool is_cased_upper(char32_t c) { return to_lower(c) != c; }
bool is_cased_lower(char32_t c) { return to_upper(c) != c || c == 0xDF; }
bool is_alpha(char32_t c) {
  return is_cased_upper(c) || is_cased_lower(c) || c == 0xAA || c == 0xBA || (c >= 0x3040 && c <= 0x9FFF) ||
         (c >= 0xAC00 && c <= 0xD7A3);
}
bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }

std::string upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t c = utf8::decode(s, i);
    if (c == 0xDF) {
      out += "SS";  // Python: 'ß'.upper() == 'SS'
      continue;
    }
    utf8::append(out, to_upper(c));
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) utf8::append(out, to_lower(utf8::decode(s, i)));
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out;
  bool first = true;
  for (size_t i = 0; i < s.size();) {
    char32_t c = utf8::decode(s, i);
    utf8::append(out, first ? to_upper(c) : to_lower(c));
    first = false;
  }
  return out;
}

std::string title(std::string_view s) {
  std::string out;
  bool prev_cased = false;
  for (size_t i = 0; i < s.size();) {
    char32_t c = utf8::decode(s, i);
    const bool cased = is_cased_upper(c) || is_cased_lower(c);
    utf8::append(out, prev_cased ? to_lower(c) : to_upper(c));
    prev_cased = cased;
  }
  return out;
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  std::u32string set;
  if (chars) set = decode(*chars);
  auto strip_it = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : is_space(c); };
  if (is_ascii(s) && (!chars || is_ascii(*chars))) {
    size_t b = 0, e = s.size();
    if (left)
      while (b < e && strip_it(static_cast<unsigned char>(s[b]))) ++b;
    if (right)
      while (e > b && strip_it(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
  }
  std::u32string u = decode(s);
  size_t b = 0, e = u.size();
  if (left)
    while (b < e && strip_it(u[b])) ++b;
  if (right)
    while (e > b && strip_it(u[e - 1])) --e;
  return encode(std::u32string_view(u).substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      size_t j = s.find(*sep, pos);
      if (j == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, j - pos));
      pos = j + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  std::u32string u = decode(s);
  size_t i = 0, n = u.size();
  while (true) {
    while (i < n && is_space(u[i])) ++i;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      // The remainder keeps its trailing whitespace, as in Python.
      out.push_back(encode(std::u32string_view(u).substr(i)));
      break;
    }
    size_t j = i;
    while (j < n && !is_space(u[j])) ++j;
    out.push_back(encode(std::u32string_view(u).substr(i, j - i)));
    i = j;
  }
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t end = s.size();
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      size_t j = s.rfind(*sep, end - sep->size());
      if (j == std::string_view::npos) break;
      out.emplace_back(s.substr(j + sep->size(), end - j - sep->size()));
      end = j;
    }
    out.emplace_back(s.substr(0, end));
    return {out.rbegin(), out.rend()};
  }
  std::u32string u = decode(s);
  size_t e = u.size();
  while (true) {
    while (e > 0 && is_space(u[e - 1])) --e;
    if (e == 0) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      out.push_back(encode(std::u32string_view(u).substr(0, e)));
      break;
    }
    size_t j = e;
    while (j > 0 && !is_space(u[j - 1])) --j;
    out.push_back(encode(std::u32string_view(u).substr(j, e - j)));
    e = j;
  }
  return {out.rbegin(), out.rend()};
}

std::vector<std::string> splitlines(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  size_t i = 0;
  bool pending = false;
  while (i < s.size()) {
    char32_t c = utf8::decode(s, i);
    if (is_line_break(c)) {
      if (c == '\r' && i < s.size() && s[i] == '\n') ++i;
      out.push_back(std::move(cur));
      cur.clear();
      pending = false;
    } else {
      utf8::append(cur, c);
      pending = true;
    }
  }
  if (pending) out.push_back(std::move(cur));
  return out;
}

std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts repl before every code point and at the end.
    int64_t done = 0;
    size_t i = 0;
    while (i <= s.size()) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      if (i == s.size()) break;
      size_t j = i;
      utf8::decode(s, j);
      out.append(s.substr(i, j - i));
      i = j;
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t j = s.find(old, pos);
    if (j == std::string_view::npos) break;
    out.append(s.substr(pos, j - pos));
    out.append(repl);
    pos = j + old.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

int64_t count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(length(s)) + 1;
  int64_t n = 0;
  for (size_t pos = s.find(sub); pos != std::string_view::npos; pos = s.find(sub, pos + sub.size())) ++n;
  return n;
}

int64_t find(std::string_view s, std::string_view sub, bool reverse) {
  size_t j = reverse ? s.rfind(sub) : s.find(sub);
  if (j == std::string_view::npos) return -1;
  return static_cast<int64_t>(length(s.substr(0, j)));
}

}  // namespace nurl::jinja::py
