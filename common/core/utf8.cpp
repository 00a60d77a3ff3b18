#include "core/utf8.h"

namespace nurl::utf8 {

size_t seq_len(uint8_t b) {
  if (b < 0x80) return 1;
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 3;
  if ((b & 0xF8) == 0xF0) return 4;
  return 0;
}

namespace {

// Returns the length of a valid sequence at s[i], 0 if invalid, or -1 if valid so far but cut short.
int check_at(std::string_view s, size_t i) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  const size_t n = seq_len(b0);
  if (n == 0) return 0;
  if (n == 1) return 1;
  if (b0 == 0xC0 || b0 == 0xC1 || b0 > 0xF4) return 0;
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) return -1;
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    if (k == 1) {
      if (b0 == 0xE0 && b < 0xA0) return 0;  // overlong
      if (b0 == 0xED && b > 0x9F) return 0;  // surrogate
      if (b0 == 0xF0 && b < 0x90) return 0;  // overlong
      if (b0 == 0xF4 && b > 0x8F) return 0;  // > U+10FFFF
    }
  }
  return static_cast<int>(n);
}

}  // namespace

bool valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    int n = check_at(s, i);
    if (n <= 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

size_t complete_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    int n = check_at(s, i);
    if (n < 0) return i;  // an unfinished character at the end: hold it back
    i += n == 0 ? 1 : static_cast<size_t>(n);
  }
  return i;
}

char32_t decode(std::string_view s, size_t& i) {
  int n = check_at(s, i);
  if (n <= 0) {
    ++i;
    return 0xFFFD;
  }
  const auto b0 = static_cast<uint8_t>(s[i]);
  char32_t cp = n == 1 ? b0 : n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3F);
  i += static_cast<size_t>(n);
  return cp;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace nurl::utf8
