// Oracle: testdata/golden/*.json record, for the 4-message chat, the prompt llama.cpp rendered
// from the model's own tokenizer.chat_template (chat_rendered). We render the same messages
// through the template read from the GGUF file, with the BOS/EOS texts of its vocabulary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/chat/chat-template.h"
#include "engine/gguf/gguf.h"
#include "testdata.h"

namespace nurl::chat {
namespace {

using ojson = nlohmann::ordered_json;

TEST(ModelChatGolden, RenderedPromptMatchesLlamaCpp) {
  NURL_REQUIRE_TESTDATA();
  int with_template = 0, matched = 0, base_models = 0;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(test::testdata("golden")))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    const ojson g = ojson::parse(in);
    const std::string model = g["model"]["file"].get<std::string>();
    SCOPED_TRACE(model);
    const ojson* chat = nullptr;
    for (const auto& r : g["results"])
      if (r["id"] == "chat") chat = &r;
    ASSERT_NE(chat, nullptr);

    auto file = gguf::File::open(test::testdata("models/" + model));
    ASSERT_TRUE(file.ok()) << file.error().msg;
    auto mc = load_model_chat(*file);
    ASSERT_TRUE(mc.ok()) << mc.error().msg;
    if (!mc->chat_template) {
      // A base model: llama.cpp's server falls back to ChatML here (chat_rendered shows it); we
      // use the prompt as is and invent no turns. Only stories260K is such a model.
      ++base_models;
      EXPECT_EQ(model, "stories260K.gguf");
      EXPECT_NE((*chat)["chat_rendered"].get<std::string>().find("<|im_start|>"), std::string::npos);
      continue;
    }
    ++with_template;
    ChatOptions opts;
    opts.add_generation_prompt = true;
    opts.bos_token = mc->bos_token;
    opts.eos_token = mc->eos_token;
    opts.strip_leading_bos = g["llama_cpp"]["vocab"]["add_bos"].get<bool>();
    auto out = render_chat(*mc->chat_template, (*chat)["chat_messages"], opts);
    ASSERT_TRUE(out.ok()) << out.error().msg;
    EXPECT_EQ(*out, (*chat)["chat_rendered"].get<std::string>());
    if (*out == (*chat)["chat_rendered"].get<std::string>()) ++matched;
  }
  std::printf("[ summary  ] model chat prompts: %d/%d with a template match llama.cpp; %d base model(s) without one\n",
              matched, with_template, base_models);
  EXPECT_EQ(matched, with_template);
  EXPECT_EQ(base_models, 1);
}

// Phi-3's template has no system role: the probe must detect it (the polyfill relies on it),
// while templates that print the system message must not be touched.
TEST(ModelChatGolden, SystemRoleProbe) {
  NURL_REQUIRE_TESTDATA();
  const std::pair<const char*, bool> cases[] = {{"phi3-Q4_K_M.gguf", false},
                                                {"qwen2-F16-embQ4_0.gguf", true},
                                                {"gemma3-F16-embQ4_0.gguf", true},
                                                {"llama-tok512-Q8_0.gguf", true}};
  for (const auto& [model, supported] : cases) {
    auto file = gguf::File::open(test::testdata(std::string("models/") + model));
    ASSERT_TRUE(file.ok()) << file.error().msg;
    auto mc = load_model_chat(*file);
    ASSERT_TRUE(mc.ok() && mc->chat_template) << model;
    EXPECT_EQ(mc->chat_template->supports_system_role(), supported) << model;
  }
}

}  // namespace
}  // namespace nurl::chat
