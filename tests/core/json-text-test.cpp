#include "core/json-text.h"

#include <gtest/gtest.h>

namespace nurl {
namespace {

TEST(JsonText, BadInputIsDiscarded) {
  for (const char* text : {"", "{\"a\":", "[1,]", "1 2", "{\"a\":1}x", "nul", "\"\\u12\""}) {
    EXPECT_TRUE(parse_json(text).is_discarded()) << text;
    EXPECT_TRUE(parse_ordered_json(text).is_discarded()) << text;
  }
}

TEST(JsonText, ParsesWholeValues) {
  const nlohmann::json j = parse_json(" {\"n\": -1.5e2, \"s\": \"\\u00e9\\n\", \"a\": [true, null]} ");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["n"].get<double>(), -150.0);
  EXPECT_EQ(j["s"].get<std::string>(), "\xC3\xA9\n");
  EXPECT_EQ(j["a"], nlohmann::json::array({true, nullptr}));
  // A view that is not NUL-terminated: only its bytes are read.
  const std::string text = "[1,2]garbage";
  EXPECT_EQ(parse_json(std::string_view(text).substr(0, 5)), nlohmann::json::array({1, 2}));
}

TEST(JsonText, OrderedKeepsKeyOrder) {
  const std::string text = R"({"zeta":1,"alpha":{"y":2,"b":3}})";
  EXPECT_EQ(dump_json(parse_ordered_json(text)), text);
  EXPECT_EQ(dump_json(parse_json(text)), R"({"alpha":{"b":3,"y":2},"zeta":1})");
}

TEST(JsonText, DumpIndentsAndKeepsUtf8) {
  const nlohmann::ordered_json j = {{"k", "caf\xC3\xA9"}, {"v", {1, 2}}};
  EXPECT_EQ(dump_json(j), "{\"k\":\"caf\xC3\xA9\",\"v\":[1,2]}");
  EXPECT_EQ(dump_json(j, 2), "{\n  \"k\": \"caf\xC3\xA9\",\n  \"v\": [\n    1,\n    2\n  ]\n}");
}

TEST(JsonText, InvalidUtf8StrictThrowsReplaceWritesReplacementCharacter) {
  const nlohmann::json bad = std::string("a\xFFz");
  EXPECT_THROW(dump_json(bad), nlohmann::json::type_error);
  EXPECT_THROW(dump_json(nlohmann::ordered_json(bad), 2, InvalidUtf8::strict), nlohmann::json::type_error);
  EXPECT_EQ(dump_json(bad, -1, InvalidUtf8::replace), "\"a\xEF\xBF\xBDz\"");
  EXPECT_EQ(dump_json(nlohmann::ordered_json{{"s", "\xC3"}}, -1, InvalidUtf8::replace), "{\"s\":\"\xEF\xBF\xBD\"}");
}

}  // namespace
}  // namespace nurl
