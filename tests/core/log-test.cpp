// Logger: levels map onto syslog priorities, fields reach field-aware sinks and appear in text,
// the rotating log file stays bounded, and the journal is recognised only by its own stream.
#include "core/log.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "support/temp-dir.h"

namespace nurl {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Log, SyslogPrioritiesOfTheJournal) {
  // sd-daemon(3): err 3, warning 4, info 6, debug 7.
  EXPECT_EQ(syslog_priority(LogLevel::error), 3);
  EXPECT_EQ(syslog_priority(LogLevel::warn), 4);
  EXPECT_EQ(syslog_priority(LogLevel::info), 6);
  EXPECT_EQ(syslog_priority(LogLevel::debug), 7);
}

TEST(Log, FieldsReachTheSinkAndTheText) {
  std::vector<std::string> lines;
  Logger text([&](LogLevel, std::string_view l) { lines.emplace_back(l); });
  text.info("loaded", {.model = "llama3", .request_id = "7-1", .client = "127.0.0.1:5"});
  text.info("plain");
  EXPECT_EQ(lines[0], "loaded model=llama3 request=7-1");
  EXPECT_EQ(lines[1], "plain");

  std::string model;
  Logger fields;
  fields.set_sink([&](LogLevel, std::string_view, const LogFields& f) { model = std::string(f.model); });
  fields.error("boom", {.model = "m"});
  EXPECT_EQ(model, "m");
}

TEST(Log, RotatingFileStaysBounded) {
  test::TempDir dir;
  std::string err;
  auto f = RotatingFile::open((dir / "d.log").string(), 1000, &err);
  ASSERT_TRUE(f) << err;
  const std::string line(99, 'x');  // 100 bytes with the newline
  for (int i = 0; i < 35; ++i) f->write_line(line);
  struct stat a {}, b {};
  ASSERT_EQ(::stat((dir / "d.log").c_str(), &a), 0);
  ASSERT_EQ(::stat((dir / "d.log.1").c_str(), &b), 0);
  EXPECT_LE(a.st_size, 1000);
  EXPECT_EQ(b.st_size, 1000);
  EXPECT_EQ(a.st_size, (35 % 10 == 0 ? 10 : 35 % 10) * 100);
  EXPECT_FALSE(std::filesystem::exists(dir / "d.log.2")) << "one old file is kept, no more";
}

TEST(Log, StderrSinkAppendsTimestampedLinesToTheFile) {
  test::TempDir dir;
  std::string err;
  std::shared_ptr<RotatingFile> f = RotatingFile::open((dir / "t.log").string(), 1 << 20, &err);
  ASSERT_TRUE(f);
  unsetenv("JOURNAL_STREAM");
  Logger log;
  log.set_sink(stderr_sink(f));
  log.warn("disk nearly full", {.model = "q"});
  const std::string s = slurp(dir / "t.log");
  EXPECT_NE(s.find(" WARN  disk nearly full model=q\n"), std::string::npos) << s;
  EXPECT_EQ(s.substr(4, 1), "-");  // 2025-...
}

TEST(Log, JournalIsRecognisedByItsStreamOnly) {
  struct stat st {};
  ASSERT_EQ(::fstat(2, &st), 0);
  const std::string mine = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  setenv("JOURNAL_STREAM", mine.c_str(), 1);
  EXPECT_TRUE(stderr_is_journal());
  // A child that inherited the variable but not the stream.
  setenv("JOURNAL_STREAM", (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1)).c_str(), 1);
  EXPECT_FALSE(stderr_is_journal());
  setenv("JOURNAL_STREAM", "garbage", 1);
  EXPECT_FALSE(stderr_is_journal());
  unsetenv("JOURNAL_STREAM");
  EXPECT_FALSE(stderr_is_journal());
}

}  // namespace
}  // namespace nurl
