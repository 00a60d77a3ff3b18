#include "core/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace nurl {

LogLevel parse_log_level(std::string_view s) {
  if (s == "debug") return LogLevel::debug;
  if (s == "warn" || s == "warning") return LogLevel::warn;
  if (s == "error") return LogLevel::error;
  return LogLevel::info;
}

namespace {

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::debug: return "DEBUG";
    case LogLevel::info: return "INFO";
    case LogLevel::warn: return "WARN";
    case LogLevel::error: return "ERROR";
  }
  return "INFO";
}

int syslog_priority(LogLevel l) {
  switch (l) {
    case LogLevel::debug: return 7;
    case LogLevel::info: return 6;
    case LogLevel::warn: return 4;
    case LogLevel::error: return 3;
  }
  return 6;
}

Logger::Sink stderr_sink() {
  // systemd sets JOURNAL_STREAM when stderr is connected to the journal; then the journal adds
  // its own timestamps and we give it the priority prefix instead.
  const bool journal = std::getenv("JOURNAL_STREAM") != nullptr;
  return [journal](LogLevel l, std::string_view line) {
    if (journal) {
      std::fprintf(stderr, "<%d>%.*s\n", syslog_priority(l), int(line.size()), line.data());
    } else {
      auto now = std::chrono::system_clock::now();
      std::time_t t = std::chrono::system_clock::to_time_t(now);
      std::tm tm{};
      localtime_r(&t, &tm);
      char ts[32];
      std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
      std::fprintf(stderr, "%s %-5s %.*s\n", ts, level_name(l), int(line.size()), line.data());
    }
    std::fflush(stderr);
  };
}

}  // namespace

Logger::Logger() : sink_(stderr_sink()) {}

Logger::Logger(Sink sink, LogLevel level) : sink_(std::move(sink)), level_(level) {}

void Logger::log(LogLevel l, std::string_view msg) {
  if (!enabled(l)) return;
  std::lock_guard<std::mutex> lock(mu_);
  sink_(l, msg);
}

}  // namespace nurl
