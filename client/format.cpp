#include "client/format.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace nurl::client {

std::string human_bytes(uint64_t n) {
  static const char* kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double v = double(n);
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  else if (v < 10) std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  else std::snprintf(buf, sizeof buf, "%.0f %s", v, kUnits[u]);
  return buf;
}

std::string human_duration(std::chrono::seconds d) {
  int64_t s = d.count();
  if (s < 1) return "Less than a second";
  auto unit = [](int64_t n, const char* name) {
    return std::to_string(n) + " " + name + (n == 1 ? "" : "s");
  };
  if (s < 60) return unit(s, "second");
  if (s < 3600) return unit(s / 60, "minute");
  if (s < 86400) return unit(s / 3600, "hour");
  if (s < 86400 * 30) return unit(s / 86400, "day");
  if (s < 86400 * 365) return unit(s / (86400 * 30), "month");
  return unit(s / (86400 * 365), "year");
}

std::string human_ago(int64_t t, int64_t now) {
  if (t < 0) return "unknown";
  return human_duration(std::chrono::seconds(now - t)) + " ago";
}

std::string human_until(int64_t t, int64_t now) {
  if (t < 0) return "Forever";
  if (t - now > 50LL * 365 * 86400) return "Forever";
  if (t <= now) return "Stopping...";
  return human_duration(std::chrono::seconds(t - now)) + " from now";
}

int64_t parse_rfc3339(const std::string& s) {
  int Y, M, D, h, m;
  double sec;
  if (std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%lf", &Y, &M, &D, &h, &m, &sec) != 6) return -1;
  std::tm tm{};
  tm.tm_year = Y - 1900;
  tm.tm_mon = M - 1;
  tm.tm_mday = D;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = int(sec);
  int64_t t = timegm(&tm);
  // Offset: 'Z' or ±hh:mm after the seconds.
  auto pos = s.find_first_of("Z+-", 19);
  if (pos != std::string::npos && s[pos] != 'Z') {
    int oh = 0, om = 0;
    if (std::sscanf(s.c_str() + pos + 1, "%d:%d", &oh, &om) >= 1) {
      int64_t off = oh * 3600 + om * 60;
      t += s[pos] == '+' ? -off : off;
    }
  }
  return t;
}

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 4, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string progress_line(const std::string& label, uint64_t completed, uint64_t total, double bps, int bar_width) {
  std::string line = label;
  if (total == 0) return line + " " + human_bytes(completed);
  double frac = std::min(1.0, double(completed) / double(total));
  char pct[8];
  std::snprintf(pct, sizeof pct, "%3d%%", int(frac * 100));
  int filled = int(std::lround(frac * bar_width));
  std::string bar;
  for (int i = 0; i < bar_width; ++i) bar += i < filled ? "█" : " ";
  line += " " + std::string(pct) + " ▕" + bar + "▏ " + human_bytes(completed) + "/" + human_bytes(total);
  if (bps > 0 && completed < total) {
    line += "  " + human_bytes(uint64_t(bps)) + "/s";
    int64_t eta = int64_t(double(total - completed) / bps);
    char buf[32];
    if (eta >= 3600) std::snprintf(buf, sizeof buf, "  %lldh%02lldm", (long long)(eta / 3600), (long long)(eta % 3600 / 60));
    else if (eta >= 60) std::snprintf(buf, sizeof buf, "  %lldm%02llds", (long long)(eta / 60), (long long)(eta % 60));
    else std::snprintf(buf, sizeof buf, "  %llds", (long long)eta);
    line += buf;
  }
  return line;
}

}  // namespace nurl::client
