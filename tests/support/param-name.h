// Readable names for parameterised test cases: ctest lists `Suite/Test/<name>` instead of
// gtest's byte dump of the parameter. Anything but letters and digits becomes '_'.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

namespace nurl::test {

inline std::string case_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s.empty() ? std::string("empty") : s;
}

// A float parameter as part of a name: 0.05 → "0_05".
inline std::string case_name(const char* prefix, float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%g", prefix, static_cast<double>(v));
  return case_name(buf);
}

// A case named by its index and the start of a text that describes it (a model name, a pattern,
// a schema): "3_hf_co_org_repo_Q8_0". Runs of other characters become one '_'; the index keeps
// names unique where texts share their start or differ only in punctuation.
inline std::string numbered_case_name(size_t index, std::string_view text, size_t max_chars = 40) {
  std::string out = std::to_string(index) + "_";
  for (char c : text) {
    if (out.size() >= max_chars) break;
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
    else if (out.back() != '_') out += '_';
  }
  while (out.back() == '_') out.pop_back();
  return out;
}

}  // namespace nurl::test
