// Renders the daemon's progress events (ollama's ProgressResponse: status, digest, total,
// completed). On a terminal: a redrawn bar with size, percent, speed and ETA. Otherwise plain
// lines: one per status change and one per 10% of a transfer, so logs stay readable.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace nurl::client {

class ProgressPrinter {
 public:
  ProgressPrinter(std::FILE* out, bool tty) : out_(out), tty_(tty) {}
  void on_event(const nlohmann::json& ev);
  void finish();

 private:
  void end_line();

  std::FILE* out_;
  bool tty_;
  std::string status_;
  bool line_open_ = false;
  int last_decile_ = -1;
  uint64_t speed_base_bytes_ = 0;
  std::chrono::steady_clock::time_point speed_base_time_{};
  double bps_ = 0;
};

}  // namespace nurl::client
