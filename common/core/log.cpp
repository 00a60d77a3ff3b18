#include "core/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace nurl {

LogLevel parse_log_level(std::string_view s) {
  if (s == "debug") return LogLevel::debug;
  if (s == "warn" || s == "warning") return LogLevel::warn;
  if (s == "error") return LogLevel::error;
  return LogLevel::info;
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

std::string with_fields_text(std::string_view msg, const LogFields& f) {
  std::string out(msg);
  if (!f.model.empty()) out.append(" model=").append(f.model);
  if (!f.request_id.empty()) out.append(" request=").append(f.request_id);
  return out;
}

bool stderr_is_journal() {
  const char* js = std::getenv("JOURNAL_STREAM");
  if (!js) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(js, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev && static_cast<unsigned long long>(st.st_ino) == ino;
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

std::string timestamped(LogLevel l, std::string_view text) {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  char head[48];
  std::snprintf(head, sizeof head, "%s %-5s ", ts, level_name(l));
  return std::string(head).append(text);
}

}  // namespace

std::unique_ptr<RotatingFile> RotatingFile::open(const std::string& path, uint64_t max_bytes, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) {
    if (error) *error = "cannot open log file " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  ::fstat(fd, &st);
  return std::unique_ptr<RotatingFile>(new RotatingFile(path, fd, static_cast<uint64_t>(st.st_size), max_bytes));
}

RotatingFile::RotatingFile(std::string path, int fd, uint64_t size, uint64_t max_bytes)
    : path_(std::move(path)), fd_(fd), size_(size), max_bytes_(max_bytes) {}

RotatingFile::~RotatingFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RotatingFile::rotate() {
  const std::string old = path_ + ".1";
  if (::rename(path_.c_str(), old.c_str()) != 0) return;  // keep appending to what we have
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return;
  ::close(fd_);
  fd_ = fd;
  size_ = 0;
}

void RotatingFile::write_line(std::string_view line) {
  if (fd_ < 0) return;
  if (size_ > 0 && size_ + line.size() + 1 > max_bytes_) rotate();
  std::string buf(line);
  buf.push_back('\n');
  ssize_t n = ::write(fd_, buf.data(), buf.size());
  if (n > 0) size_ += static_cast<uint64_t>(n);
}

Logger::FieldSink stderr_sink(std::shared_ptr<RotatingFile> file) {
  // When stderr is the journal, the journal adds its own timestamps; it reads the priority from
  // the "<N>" prefix.
  const bool journal = stderr_is_journal();
  return [journal, file](LogLevel l, std::string_view msg, const LogFields& f) {
    const std::string text = with_fields_text(msg, f);
    if (journal) {
      std::fprintf(stderr, "<%d>%s\n", syslog_priority(l), text.c_str());
    } else {
      const std::string line = timestamped(l, text);
      std::fprintf(stderr, "%s\n", line.c_str());
      if (file) file->write_line(line);
    }
    std::fflush(stderr);
  };
}

Logger::Logger() : sink_(stderr_sink()) {}

Logger::Logger(Sink sink, LogLevel level)
    : sink_([s = std::move(sink)](LogLevel l, std::string_view msg, const LogFields& f) {
        if (f.model.empty() && f.request_id.empty()) s(l, msg);
        else s(l, with_fields_text(msg, f));
      }),
      level_(level) {}

void Logger::set_sink(FieldSink sink) {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = std::move(sink);
}

void Logger::log(LogLevel l, std::string_view msg, const LogFields& f) {
  if (!enabled(l)) return;
  std::lock_guard<std::mutex> lock(mu_);
  sink_(l, msg, f);
}

}  // namespace nurl
