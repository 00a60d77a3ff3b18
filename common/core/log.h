// Logger: levelled log lines to a sink (stderr by default), in a journald-friendly form:
// with `journal_prefix` each line starts with the syslog priority "<N>" that journald parses.
// A Logger is owned by whoever runs the program (Daemon, a tool) and passed down; there is no global.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>


namespace nurl {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3 };

// Parses "debug", "info", "warn"/"warning", "error"; unknown → info.
LogLevel parse_log_level(std::string_view s);

class Logger {
 public:
  using Sink = std::function<void(LogLevel, std::string_view line)>;

  Logger();  // stderr sink, level info, journal prefix when stderr is the journal
  explicit Logger(Sink sink, LogLevel level = LogLevel::info);

  void set_level(LogLevel l) { level_ = l; }
  LogLevel level() const { return level_; }
  bool enabled(LogLevel l) const { return l >= level_; }

  void log(LogLevel l, std::string_view msg);
  void debug(std::string_view m) { log(LogLevel::debug, m); }
  void info(std::string_view m) { log(LogLevel::info, m); }
  void warn(std::string_view m) { log(LogLevel::warn, m); }
  void error(std::string_view m) { log(LogLevel::error, m); }

 private:
  Sink sink_;
  LogLevel level_ = LogLevel::info;
  std::mutex mu_;
};

}  // namespace nurl
