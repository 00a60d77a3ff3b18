// Human-facing formatting shared by the commands: sizes, durations, tables, progress bars.
// Sizes are decimal (1 MB = 10^6 bytes) as ollama prints them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace nurl::client {

std::string human_bytes(uint64_t n);                        // "361 MB", "1.2 GB", "512 B"
std::string human_duration(std::chrono::seconds d);         // "3 minutes", "2 hours", "Less than a second"
std::string human_ago(int64_t unix_seconds, int64_t now);   // "5 minutes ago"
std::string human_until(int64_t unix_seconds, int64_t now); // "4 minutes from now", "Forever"

// Parses RFC 3339 ("2024-05-06T10:11:12.123-07:00") to unix seconds; -1 when it cannot.
int64_t parse_rfc3339(const std::string& s);

// Left-aligned columns separated by 4 spaces; the first row is the header.
std::string render_table(const std::vector<std::vector<std::string>>& rows);

// One progress line: "pulling 3f2a1b…  42% ▕████      ▏ 150 MB/360 MB  24 MB/s  8s".
std::string progress_line(const std::string& label, uint64_t completed, uint64_t total, double bytes_per_s,
                          int bar_width = 25);

}  // namespace nurl::client
