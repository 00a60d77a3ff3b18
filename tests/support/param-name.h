// Readable names for parameterised test cases: ctest lists `Suite/Test/<name>` instead of
// gtest's byte dump of the parameter. Anything but letters and digits becomes '_'.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>

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

}  // namespace nurl::test
