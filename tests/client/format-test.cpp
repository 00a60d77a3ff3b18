#include "client/format.h"

#include <gtest/gtest.h>

namespace nurl::client {
namespace {

TEST(Format, HumanBytesIsDecimalLikeOllama) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1'500), "1.5 KB");
  EXPECT_EQ(human_bytes(397'821'312), "398 MB");
  EXPECT_EQ(human_bytes(4'920'000'000ULL), "4.9 GB");
}

TEST(Format, Rfc3339WithOffsets) {
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_rfc3339("2024-05-06T10:11:12.5+02:00"), parse_rfc3339("2024-05-06T08:11:12Z"));
  EXPECT_EQ(parse_rfc3339("garbage"), -1);
}

TEST(Format, RelativeTimes) {
  EXPECT_EQ(human_ago(1000 - 300, 1000), "5 minutes ago");
  EXPECT_EQ(human_until(1000 + 240, 1000), "4 minutes from now");
  EXPECT_EQ(human_until(-1, 1000), "Forever");
}

TEST(Format, TableAlignsColumns) {
  EXPECT_EQ(render_table({{"NAME", "SIZE"}, {"a-long-name:latest", "1 MB"}}),
            "NAME                  SIZE\n"
            "a-long-name:latest    1 MB\n");
}

TEST(Format, ProgressLine) {
  std::string l = progress_line("pulling abc", 50, 100, 0, 10);
  EXPECT_NE(l.find(" 50%"), std::string::npos) << l;
  EXPECT_NE(l.find("50 B/100 B"), std::string::npos) << l;
}

}  // namespace
}  // namespace nurl::client
