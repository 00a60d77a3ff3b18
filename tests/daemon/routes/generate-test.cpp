// The ollama routes end to end without sockets: request JSON → handle_request → Stream chunks,
// driven on a strand like the server does, with the fake model behind the scheduler.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "route-harness.h"

namespace nurl {
namespace {

using Json = nlohmann::json;
using Reply = test::RouteReply;
using Routes = test::RouteHarness;

TEST_F(Routes, GenerateStreamsNdjsonWithOllamaFields) {
  auto r = call("POST", "/api/generate",
                R"({"model":)" + model_json() + R"(,"prompt":"hi","options":{"num_predict":6,"temperature":0}})");
  ASSERT_EQ(r.status, 200) << r.chunks[0];
  EXPECT_TRUE(r.streamed);
  EXPECT_EQ(r.content_type, "application/x-ndjson");
  ASSERT_GE(r.chunks.size(), 2u);
  std::string text;
  for (size_t i = 0; i + 1 < r.chunks.size(); ++i) {
    ASSERT_EQ(r.chunks[i].back(), '\n');
    auto j = Json::parse(r.chunks[i]);
    EXPECT_EQ(j["done"], false);
    EXPECT_TRUE(j["created_at"].is_string());
    EXPECT_EQ(j["model"], model_path_);
    text += j["response"].get<std::string>();
  }
  auto fin = Json::parse(r.chunks.back());
  EXPECT_EQ(fin["done"], true);
  EXPECT_EQ(fin["done_reason"], "length");
  EXPECT_EQ(fin["eval_count"], 6);
  EXPECT_EQ(fin["prompt_eval_count"], 8);  // "<user>hi": generate goes through the template
  for (const char* k : {"total_duration", "load_duration", "prompt_eval_duration", "eval_duration"})
    EXPECT_TRUE(fin[k].is_number_integer()) << k;
  EXPECT_EQ(fin["context"].size(), 14u);
  EXPECT_EQ(text.size(), 6u);

  // stream:false gives the same text in one object.
  auto one = call("POST", "/api/generate",
                  R"({"model":)" + model_json() + R"(,"prompt":"hi","stream":false,"options":{"num_predict":6}})");
  ASSERT_EQ(one.status, 200);
  EXPECT_FALSE(one.streamed);
  auto j = Json::parse(one.chunks.at(0));
  EXPECT_EQ(j["response"], text);
  EXPECT_EQ(j["done"], true);
}

TEST_F(Routes, ChatUsesTheTemplateAndMessageObjects) {
  auto r = call("POST", "/api/chat",
                R"({"name":)" + model_json() +
                    R"(,"messages":[{"role":"user","content":"yo"}],"stream":false,"options":{"num_predict":3}})");
  ASSERT_EQ(r.status, 200) << r.chunks[0];
  auto j = Json::parse(r.chunks.at(0));
  EXPECT_EQ(j["message"]["role"], "assistant");
  EXPECT_EQ(j["message"]["content"].get<std::string>().size(), 3u);
  EXPECT_EQ(j["prompt_eval_count"], 8);  // "<user>yo" through the fake template
  EXPECT_FALSE(j.contains("context"));
}

TEST_F(Routes, DebugRenderOnlyReturnsTheRenderedPrompt) {
  auto r = call("POST", "/api/chat",
                R"({"model":)" + model_json() +
                    R"(,"messages":[{"role":"system","content":"S"},{"role":"user","content":"U"}],"_debug_render_only":true})");
  ASSERT_EQ(r.status, 200) << r.chunks[0];
  auto j = Json::parse(r.chunks.at(0));
  EXPECT_EQ(j["debug_info"]["rendered_template"], "<system>S<user>U");
}

TEST_F(Routes, EmptyPromptLoadsKeepAliveZeroUnloads) {
  auto r = call("POST", "/api/generate", R"({"model":)" + model_json() + "}");
  ASSERT_EQ(r.status, 200) << r.chunks[0];
  EXPECT_EQ(Json::parse(r.chunks.at(0))["done_reason"], "load");
  EXPECT_EQ(scheduler_->resident().size(), 1u);
  auto ps = call("GET", "/api/ps", "");
  auto models = Json::parse(ps.chunks.at(0))["models"];
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0]["name"], model_path_);
  EXPECT_EQ(models[0]["context_length"], 512);
  EXPECT_TRUE(models[0]["expires_at"].is_string());

  auto u = call("POST", "/api/generate", R"({"model":)" + model_json() + R"(,"keep_alive":0})");
  EXPECT_EQ(Json::parse(u.chunks.at(0))["done_reason"], "unload");
  for (int i = 0; i < 200 && !scheduler_->resident().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(scheduler_->resident().empty());
}

TEST_F(Routes, BadInputGetsOllamaErrors) {
  struct Case {
    std::string path, body;
    int status;
    std::string error_part;
  };
  const std::vector<Case> cases = {
      {"/api/generate", "", 400, "missing request body"},
      {"/api/generate", "{not json", 400, "invalid JSON"},
      {"/api/generate", R"({"prompt":"x"})", 400, "model is required"},
      {"/api/chat", "[1,2]", 400, "JSON object"},
      {"/api/generate", R"({"model":"nosuch","prompt":"x"})", 404, "model 'nosuch' not found"},
      {"/api/chat", R"({"model":"no/such:tag","messages":[]})", 404, "model 'no/such:tag' not found"},
      {"/api/generate", R"({"model":"../../etc/passwd","prompt":"x"})", 400, "invalid model name"},
      {"/api/generate", R"({"model":"/nonexistent/x.gguf","prompt":"x"})", 404, "not found"},
      {"/api/generate", R"({"model":"a/../../b","prompt":"x"})", 400, "invalid model name"},
      {"/api/generate", R"({"model":"a\\b","prompt":"x"})", 400, "invalid model name"},
      {"/api/generate", R"({"model":)" + model_json() + R"(,"prompt":"x","options":{"temperature":"hot"}})", 400,
       "temperature"},
      {"/api/generate", R"({"model":)" + model_json() + R"(,"prompt":"x","options":{"num_predict":1.5}})", 400,
       "num_predict"},
      {"/api/generate", R"({"model":)" + model_json() + R"(,"prompt":"x","options":{"stop":7}})", 400, "stop"},
      {"/api/generate", R"({"model":)" + model_json() + R"(,"prompt":5})", 400, "prompt"},
      {"/api/generate", R"({"model":)" + model_json() + R"(,"prompt":"x","keep_alive":"soon"})", 400, "keep_alive"},
      {"/api/chat", R"({"model":)" + model_json() + R"(,"messages":[{"content":"x"}]})", 400, "role"},
      // ollama's rule and message: a raw prompt takes nothing to template around it.
      {"/api/generate", R"({"model":)" + model_json() + R"(,"prompt":"x","raw":true,"system":"s"})", 400,
       "raw mode does not support template, system, or context"},
      {"/api/generate", R"({"model":)" + model_json() + R"(,"prompt":"x","raw":true,"template":"{{ .Prompt }}"})", 400,
       "raw mode does not support template, system, or context"},
      {"/api/generate", R"({"model":)" + model_json() + R"(,"prompt":"x","raw":true,"context":[1,2]})", 400,
       "raw mode does not support template, system, or context"},
  };
  for (const auto& c : cases) {
    auto r = call("POST", c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.body;
    auto j = Json::parse(r.chunks.at(0), nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << r.chunks[0];
    EXPECT_NE(j["error"].get<std::string>().find(c.error_part), std::string::npos)
        << c.body << " → " << j["error"];
  }
}

TEST_F(Routes, PathsOverTcpNeedPermission) {
  Config c = *config_->get();
  c.allow_model_paths = false;
  config_->set(c);
  auto r = call("POST", "/api/generate", R"({"model":)" + model_json() + R"(,"prompt":"x"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.chunks[0].find("control socket"), std::string::npos);
}

TEST_F(Routes, UnknownOptionsAreIgnored) {
  auto r = call("POST", "/api/generate",
                R"({"model":)" + model_json() + R"(,"prompt":"x","stream":false,"options":{"num_predict":2,"mirostat":2,"whatever":true}})");
  EXPECT_EQ(r.status, 200) << r.chunks[0];
}

TEST_F(Routes, StopOptionCutsTheAnswer) {
  auto full = call("POST", "/api/generate",
                   R"({"model":)" + model_json() + R"(,"prompt":"q","stream":false,"options":{"num_predict":12}})");
  std::string text = Json::parse(full.chunks.at(0))["response"];
  ASSERT_EQ(text.size(), 12u);
  std::string stop = text.substr(5, 2);
  auto cut = call("POST", "/api/generate",
                  R"({"model":)" + model_json() + R"(,"prompt":"q","stream":false,"options":{"num_predict":12,"stop":[")" +
                      stop + R"("]}})");
  auto j = Json::parse(cut.chunks.at(0));
  EXPECT_EQ(j["response"], text.substr(0, text.find(stop)));
  EXPECT_EQ(j["done_reason"], "stop");
}

TEST_F(Routes, TruncateFalseRejectsAndTruncationIsReported) {
  std::string long_prompt(700, 'z');  // num_ctx 512
  auto strict = call("POST", "/api/generate",
                     R"({"model":)" + model_json() + R"(,"prompt":")" + long_prompt + R"(","truncate":false})");
  EXPECT_EQ(strict.status, 400);
  auto lenient = call("POST", "/api/generate",
                      R"({"model":)" + model_json() + R"(,"prompt":")" + long_prompt +
                          R"(","stream":false,"options":{"num_predict":1}})");
  ASSERT_EQ(lenient.status, 200);
  EXPECT_GT(Json::parse(lenient.chunks.at(0))["truncated_prompt_tokens"].get<int>(), 0);
}

TEST_F(Routes, VersionAndRoot) {
  EXPECT_EQ(call("GET", "/", "").chunks[0], "nurllama is running");
  EXPECT_EQ(call("HEAD", "/", "").status, 200);
  EXPECT_TRUE(Json::parse(call("GET", "/api/version", "").chunks[0])["version"].is_string());
}

}  // namespace
}  // namespace nurl
