#include "core/utf8.h"

#include <gtest/gtest.h>

namespace nurl {
namespace {

TEST(Utf8, Valid) {
  EXPECT_TRUE(utf8::valid("héllo ✓ 🙂"));
  EXPECT_FALSE(utf8::valid("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(utf8::valid("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(utf8::valid("\xF4\x90\x80\x80"));  // > U+10FFFF
  EXPECT_FALSE(utf8::valid("\xE2\x9C"));          // cut short
}

TEST(Utf8, CompletePrefixHoldsBackOnlyUnfinishedCharacters) {
  const std::string smile = "\xF0\x9F\x99\x82";
  EXPECT_EQ(utf8::complete_prefix("ab" + smile.substr(0, 2)), 2u);
  EXPECT_EQ(utf8::complete_prefix("ab" + smile), 6u);
  EXPECT_EQ(utf8::complete_prefix("a\xFF"), 2u);  // never-valid byte is passed on
}

TEST(Utf8, RoundTrip) {
  for (char32_t cp : {U'a', U'é', U'✓', U'🙂', char32_t(0x10FFFF)}) {
    std::string s;
    utf8::append(s, cp);
    size_t i = 0;
    EXPECT_EQ(utf8::decode(s, i), cp);
    EXPECT_EQ(i, s.size());
  }
}

}  // namespace
}  // namespace nurl
