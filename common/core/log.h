// Logger: levelled log lines to a sink, owned by whoever runs the program (Daemon, a tool) and
// passed down; there is no global. A line may carry structured fields (model, request id, client)
// that the journal stores as MODEL=, REQUEST_ID=, CLIENT=; text sinks append the model and the
// request id as "model=… request=…" (the client is already in the text of the lines that have it).
// Sinks: stderr (timestamps on a terminal, the "<N>" syslog prefix when stderr is the journal),
// a size-bounded rotating file, and any function (tests, the daemon's sd_journal_send sink).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace nurl {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3 };

// Parses "debug", "info", "warn"/"warning", "error"; unknown → info.
LogLevel parse_log_level(std::string_view s);
// The syslog priority of a level: debug 7, info 6, warning 4, err 3.
int syslog_priority(LogLevel l);

struct LogFields {
  std::string_view model{};       // MODEL=
  std::string_view request_id{};  // REQUEST_ID=
  std::string_view client{};      // CLIENT=
};

// msg plus the text form of the fields (" model=… request=…").
std::string with_fields_text(std::string_view msg, const LogFields& f);

// True when systemd connected stderr to the journal: $JOURNAL_STREAM ("dev:ino") names the
// device and inode of file descriptor 2 (a child that inherited the variable but not the stream
// does not count).
bool stderr_is_journal();

// A log file that never grows past max_bytes: when a write would pass it, the file is renamed to
// "<path>.1" (the previous .1 is dropped) and a new one started, so at most 2 × max_bytes stay.
class RotatingFile {
 public:
  static std::unique_ptr<RotatingFile> open(const std::string& path, uint64_t max_bytes, std::string* error);
  ~RotatingFile();
  RotatingFile(const RotatingFile&) = delete;
  RotatingFile& operator=(const RotatingFile&) = delete;

  void write_line(std::string_view line);  // appends line + '\n'; callers serialise
  const std::string& path() const { return path_; }

 private:
  RotatingFile(std::string path, int fd, uint64_t size, uint64_t max_bytes);
  void rotate();

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t max_bytes_ = 0;
};

class Logger {
 public:
  using Sink = std::function<void(LogLevel, std::string_view line)>;
  using FieldSink = std::function<void(LogLevel, std::string_view msg, const LogFields&)>;

  Logger();  // stderr sink, level info, journal prefix when stderr is the journal
  explicit Logger(Sink sink, LogLevel level = LogLevel::info);  // gets the text form of the fields

  // Replaces the sink (at start-up, before other threads log).
  void set_sink(FieldSink sink);
  void set_level(LogLevel l) { level_ = l; }
  LogLevel level() const { return level_; }
  bool enabled(LogLevel l) const { return l >= level_; }

  void log(LogLevel l, std::string_view msg, const LogFields& f = {});
  void debug(std::string_view m, const LogFields& f = {}) { log(LogLevel::debug, m, f); }
  void info(std::string_view m, const LogFields& f = {}) { log(LogLevel::info, m, f); }
  void warn(std::string_view m, const LogFields& f = {}) { log(LogLevel::warn, m, f); }
  void error(std::string_view m, const LogFields& f = {}) { log(LogLevel::error, m, f); }

 private:
  FieldSink sink_;
  LogLevel level_ = LogLevel::info;
  std::mutex mu_;
};

// The stderr sink Logger() uses; with `file` it also appends every line (timestamped) there.
Logger::FieldSink stderr_sink(std::shared_ptr<RotatingFile> file = nullptr);

}  // namespace nurl
