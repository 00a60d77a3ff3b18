// Modelfile parsing against the format's documented examples.
#include "client/modelfile.h"

#include <gtest/gtest.h>

namespace nurl::client {
namespace {

TEST(Modelfile, DocumentedExample) {
  auto mf = parse_modelfile(
      "# a comment\n"
      "FROM ./model.gguf\n"
      "PARAMETER temperature 0.7\n"
      "PARAMETER num_ctx 4096\n"
      "PARAMETER stop \"<|im_end|>\"\n"
      "PARAMETER stop User:\n"
      "SYSTEM \"\"\"You are Mario\n"
      "from Super Mario Bros.\"\"\"\n"
      "TEMPLATE \"\"\"{{ messages }}\"\"\"\n");
  ASSERT_TRUE(mf.ok()) << mf.error().msg;
  EXPECT_EQ(mf->from, "./model.gguf");
  EXPECT_EQ(mf->system, "You are Mario\nfrom Super Mario Bros.");
  EXPECT_EQ(mf->tmpl, "{{ messages }}");
  auto p = parameters_json(mf->parameters);
  ASSERT_TRUE(p.ok()) << p.error().msg;
  EXPECT_DOUBLE_EQ((*p)["temperature"].get<double>(), 0.7);
  EXPECT_EQ((*p)["num_ctx"].get<int>(), 4096);
  EXPECT_EQ((*p)["stop"], nlohmann::json({"<|im_end|>", "User:"}));
}

TEST(Modelfile, InstructionsAreCaseInsensitive) {
  auto mf = parse_modelfile("from llama3\nsystem hi there\n");
  ASSERT_TRUE(mf.ok());
  EXPECT_EQ(mf->from, "llama3");
  EXPECT_EQ(mf->system, "hi there");
}

TEST(Modelfile, Errors) {
  struct Case {
    const char* text;
    const char* needle;
  } cases[] = {
      {"SYSTEM hi\n", "no FROM"},
      {"FROM x\nBOGUS y\n", "line 2: unknown instruction 'BOGUS'"},
      {"FROM x\nSYSTEM \"\"\"never closed\n", "unterminated"},
      {"FROM x\nPARAMETER temperature\n", "needs a name and a value"},
  };
  for (const auto& c : cases) {
    auto mf = parse_modelfile(c.text);
    ASSERT_FALSE(mf.ok()) << c.text;
    EXPECT_NE(mf.error().msg.find(c.needle), std::string::npos) << mf.error().msg;
  }
  EXPECT_FALSE(parameters_json({{"temperature", "hot"}}).ok());
  EXPECT_FALSE(parameters_json({{"num_ctx", "4k"}}).ok());
  EXPECT_FALSE(parameters_json({{"no_such_option", "1"}}).ok());
}

}  // namespace
}  // namespace nurl::client
