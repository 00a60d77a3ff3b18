// Stop sequences across token boundaries: what is emitted after each piece, and that the stop
// string itself never is.
#include <gtest/gtest.h>

#include "engine/runtime/stop.h"

namespace nurl {
namespace {

struct StopCase {
  std::string name;
  std::vector<std::string> stops;
  std::vector<std::string> pieces;
  std::vector<std::string> emitted;  // per piece
  bool stopped;
  std::string flushed;               // flush() at the end
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const StopCase& c, std::ostream* os) { *os << c.name; }

class Stop : public ::testing::TestWithParam<StopCase> {};

TEST_P(Stop, Emits) {
  const auto& c = GetParam();
  StopMatcher m(c.stops);
  ASSERT_EQ(c.pieces.size(), c.emitted.size());
  for (size_t i = 0; i < c.pieces.size(); ++i) EXPECT_EQ(m.push(c.pieces[i]), c.emitted[i]) << c.name << " piece " << i;
  EXPECT_EQ(m.stopped(), c.stopped) << c.name;
  EXPECT_EQ(m.flush(), c.flushed) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    StopMatcher, Stop,
    ::testing::Values(
        StopCase{"no stops", {}, {"a", "b"}, {"a", "b"}, false, ""},
        StopCase{"across pieces", {"world"}, {"Hello", " wor", "ld", "!"}, {"Hello", " ", "", ""}, true, ""},
        StopCase{"false alarm released", {"world"}, {"wor", "m"}, {"", "worm"}, false, ""},
        StopCase{"held at end is flushed", {"world"}, {"a wo"}, {"a "}, false, "wo"},
        StopCase{"inside one piece", {"</s>"}, {"xx</s>yy"}, {"xx"}, true, ""},
        StopCase{"piece equals stop", {"\n\n"}, {"ok", "\n", "\n"}, {"ok", "", ""}, true, ""},
        StopCase{"earliest match wins", {"bcd", "abc"}, {"ab", "cd"}, {"", ""}, true, ""},
        StopCase{"repeated prefix", {"aab"}, {"a", "a", "a", "b"}, {"", "", "a", ""}, true, ""},
        StopCase{"utf-8 stop", {"é!"}, {"caf", "é", "!"}, {"caf", "", ""}, true, ""},
        StopCase{"nothing after stop", {"X"}, {"aXb", "c"}, {"a", ""}, true, ""},
        StopCase{"empty stop ignored", {""}, {"abc"}, {"abc"}, false, ""}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(StopMatcher, ReportsWhichMatched) {
  StopMatcher m({"User:", "###"});
  EXPECT_EQ(m.push("answer ##"), "answer ");
  EXPECT_EQ(m.push("#"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "###");
}

TEST(StopMatcher, DoneReasonNames) {
  EXPECT_STREQ(done_reason_name(DoneReason::stop), "stop");
  EXPECT_STREQ(done_reason_name(DoneReason::length), "length");
}

}  // namespace
}  // namespace nurl
