#include "scheduler/text-assembler.h"

#include <gtest/gtest.h>

namespace nurl::sched {
namespace {

std::string run(TextAssembler& t, const std::vector<std::string>& pieces, bool* stopped = nullptr) {
  std::string out;
  for (const auto& p : pieces) out += t.push(p);
  out += t.finish();
  if (stopped) *stopped = t.stopped();
  return out;
}

TEST(TextAssembler, StopStringAcrossPiecesIsCutWithWhatFollows) {
  TextAssembler t({"\nUser:"});
  bool stopped = false;
  EXPECT_EQ(run(t, {"Hello", " there\n", "Us", "er: more"}, &stopped), "Hello there");
  EXPECT_TRUE(stopped);
}

TEST(TextAssembler, HeldBackPrefixIsReleasedWhenItDoesNotComplete) {
  TextAssembler t({"STOP"});
  EXPECT_EQ(t.push("abc ST"), "abc ");
  EXPECT_EQ(t.push("AR"), "STAR");
  EXPECT_EQ(t.finish(), "");
  EXPECT_FALSE(t.stopped());
}

TEST(TextAssembler, SplitUtf8IsNeverEmittedHalf) {
  TextAssembler t;
  const std::string euro = "\xE2\x82\xAC";  // U+20AC, 3 bytes
  EXPECT_EQ(t.push(euro.substr(0, 1)), "");
  EXPECT_EQ(t.push(euro.substr(1, 1)), "");
  EXPECT_EQ(t.push(euro.substr(2, 1) + "x"), euro + "x");
}

TEST(TextAssembler, EarliestOfSeveralStopsWins) {
  TextAssembler t({"c", "b"});
  bool stopped = false;
  EXPECT_EQ(run(t, {"abc"}, &stopped), "a");
  EXPECT_TRUE(stopped);
}

}  // namespace
}  // namespace nurl::sched
