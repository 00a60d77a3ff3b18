// Python str operations on UTF-8 strings, by code point as Python counts them: length, slicing,
// strip/split with Python's whitespace set, case mapping, splitlines. Case mapping covers ASCII,
// Latin-1, Latin Extended-A, Greek and Cyrillic (what chat templates meet); other scripts pass
// through unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nurl::jinja::py {

std::u32string decode(std::string_view s);  // invalid bytes become U+FFFD
std::string encode(std::u32string_view s);
size_t length(std::string_view s);           // code points
bool is_ascii(std::string_view s);

bool is_space(char32_t c);  // str.isspace()
char32_t to_upper(char32_t c);
char32_t to_lower(char32_t c);
bool is_cased_upper(char32_t c);
bool is_cased_lower(char32_t c);
bool is_alpha(char32_t c);  // letters of the scripts above plus any code point >= 0x4E00 CJK
bool is_digit(char32_t c);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string capitalize(std::string_view s);  // str.capitalize()
std::string title(std::string_view s);       // str.title()

// str.strip/lstrip/rstrip; chars == nullopt strips whitespace.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// str.split / str.rsplit; sep == nullopt splits on whitespace runs. maxsplit < 0: no limit.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
// str.splitlines(keepends=False), with Python's line boundaries.
std::vector<std::string> splitlines(std::string_view s);
bool is_line_break(char32_t c);
std::string replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count);
int64_t count(std::string_view s, std::string_view sub);
// str.find in code points; -1 when absent.
int64_t find(std::string_view s, std::string_view sub, bool reverse);

}  // namespace nurl::jinja::py
