#include "core/duration.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace nurl {

Nanos seconds_to_duration(double seconds) {
  return Nanos(static_cast<int64_t>(std::llround(seconds * 1e9)));
}

Result<Nanos> parse_duration(std::string_view s) {
  const std::string orig(s);
  auto bad = [&] { return Error(Code::invalid_argument, "invalid duration \"" + orig + "\""); };
  if (s.empty()) return bad();
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return bad();
  // A bare number is seconds.
  {
    std::string tmp(s);
    char* end = nullptr;
    double v = std::strtod(tmp.c_str(), &end);
    if (end && *end == '\0' && std::isfinite(v)) return seconds_to_duration(neg ? -v : v);
  }
  double total_ns = 0;
  while (!s.empty()) {
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return bad();
    double v = std::strtod(std::string(s.substr(0, i)).c_str(), nullptr);
    s.remove_prefix(i);
    size_t j = 0;
    while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
    std::string_view unit = s.substr(0, j);
    s.remove_prefix(j);
    double mul;
    if (unit == "ns") mul = 1;
    else if (unit == "us" || unit == "µs") mul = 1e3;
    else if (unit == "ms") mul = 1e6;
    else if (unit == "s") mul = 1e9;
    else if (unit == "m") mul = 60e9;
    else if (unit == "h") mul = 3600e9;
    else return bad();
    total_ns += v * mul;
  }
  if (!std::isfinite(total_ns) || total_ns > 9.2e18) return bad();
  return Nanos(static_cast<int64_t>(neg ? -total_ns : total_ns));
}

}  // namespace nurl
