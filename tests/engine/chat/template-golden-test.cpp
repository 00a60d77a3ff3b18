// Oracle: testdata/templates/*.json — 47 real chat templates rendered by Python Jinja2 3.1.6 with
// Hugging Face's settings. Every case with an `output` must come out byte-identical; a case with
// an `error` (the reference refused it) may fail or render, but must not crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/chat/chat-template.h"
#include "testdata.h"

namespace nurl::chat {
namespace {

using ojson = nlohmann::ordered_json;

ojson read_json(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return ojson::parse(f);
}

// The references were rendered with strftime_now fixed to 2024-07-26 12:00 (a Friday).
std::tm reference_time() {
  std::tm t{};
  t.tm_year = 2024 - 1900;
  t.tm_mon = 6;
  t.tm_mday = 26;
  t.tm_hour = 12;
  t.tm_wday = 5;
  t.tm_yday = 207;
  return t;
}

TEST(ChatTemplateGolden, EveryReferenceRenderingMatches) {
  NURL_REQUIRE_TESTDATA();
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(test::testdata("templates")))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 47u) << "expected the 47 reference templates";

  RenderOptions opts;
  opts.clock = reference_time;
  int outputs = 0, outputs_ok = 0, errors = 0, errors_refused = 0, errors_rendered = 0;
  for (const auto& path : files) {
    const ojson doc = read_json(path);
    const std::string name = path.stem().string();
    auto tmpl = ChatTemplate::parse(doc["template"].get<std::string>());
    ASSERT_TRUE(tmpl.ok()) << name << ": " << tmpl.error().msg;
    int i = 0;
    for (const auto& c : doc["cases"]) {
      SCOPED_TRACE(name + " case " + std::to_string(i++) + " (" + c["conversation"].get<std::string>() +
                   ", add_generation_prompt=" + c["add_generation_prompt"].dump() +
                   ", tools=" + (c["tools"].is_null() ? "null" : "yes") + ")");
      // The reference passed `tools` only when there were tools (null: the variable is undefined).
      ojson ctx = {{"messages", c["messages"]},
                   {"add_generation_prompt", c["add_generation_prompt"]},
                   {"bos_token", c["bos_token"]},
                   {"eos_token", c["eos_token"]}};
      if (!c["tools"].is_null()) ctx["tools"] = c["tools"];
      auto out = tmpl->render(ctx, opts);
      if (c.contains("output")) {
        ++outputs;
        if (!out.ok()) {
          ADD_FAILURE() << "render failed: " << out.error().msg;
          continue;
        }
        EXPECT_EQ(*out, c["output"].get<std::string>());
        if (*out == c["output"].get<std::string>()) ++outputs_ok;
      } else {
        ++errors;
        (out.ok() ? errors_rendered : errors_refused)++;
      }
    }
  }
  std::printf("[ summary  ] templates: %zu files; reference renderings matched %d/%d; reference errors: %d "
              "(refused here %d, rendered here %d)\n",
              files.size(), outputs_ok, outputs, errors, errors_refused, errors_rendered);
  EXPECT_EQ(outputs_ok, outputs);
}

}  // namespace
}  // namespace nurl::chat
