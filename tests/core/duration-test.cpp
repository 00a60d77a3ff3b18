#include "core/duration.h"

#include <gtest/gtest.h>

namespace nurl {
namespace {

using namespace std::chrono_literals;

TEST(Duration, ParsesOllamaForms) {
  EXPECT_EQ(*parse_duration("5m"), 5min);
  EXPECT_EQ(*parse_duration("1h30m"), 90min);
  EXPECT_EQ(*parse_duration("300ms"), 300ms);
  EXPECT_EQ(*parse_duration("-1s"), -1s);
  EXPECT_EQ(*parse_duration("30"), 30s);
  EXPECT_EQ(*parse_duration("1.5"), 1500ms);
}

TEST(Duration, RejectsGarbage) {
  for (const char* s : {"", "-", "5x", "m", "1h30", "abc"}) EXPECT_FALSE(parse_duration(s).ok()) << s;
}

}  // namespace
}  // namespace nurl
