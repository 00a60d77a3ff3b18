// The OpenAI and Anthropic routes, /metrics and /health without sockets, with the fake model
// behind a real scheduler: request JSON → the job's fields (the translators), replies in each
// API's shape, errors before the first byte in each API's error object, metrics moving by the
// amounts the fake model makes (its tokenizer is one token per byte and its template
// "<role>content", so prompt sizes are known exactly).
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "metrics/daemon-metrics.h"
#include "route-harness.h"
#include "routes/anthropic.h"
#include "routes/openai-common.h"
#include "sse-harness.h"

namespace nurl {
namespace {

using Json = nlohmann::json;

class V1Routes : public test::RouteHarness {
 protected:
  V1Routes() { observer_ = &metrics_; }
  void add_services(RouteContext& ctx) override {
    ctx.metrics = &metrics_;
    ctx.phase = &phase_;
  }
  std::string chat_body(const std::string& extra) {
    return R"({"model":)" + model_json() + R"(,"messages":[{"role":"user","content":"yo"}])" + extra + "}";
  }
  // A sample's value in the exposition, or -1 when absent.
  double sample(const std::string& line_start) {
    std::string text = metrics_.exposition(scheduler_.get());
    size_t at = text.find("\n" + line_start + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + line_start.size() + 2));
  }

  DaemonMetrics metrics_;
  std::atomic<Phase> phase_{Phase::serving};
};

TEST_F(V1Routes, ChatCompletionThroughTheTemplate) {
  auto r = call("POST", "/v1/chat/completions", chat_body(R"(,"max_tokens":3)"));
  ASSERT_EQ(r.status, 200) << r.body();
  EXPECT_EQ(last_route_, "/v1/chat/completions");
  auto j = Json::parse(r.body());
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], model_path_);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"].get<std::string>().size(), 3u);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 8);  // "<user>yo"
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);

  // Streaming gives the same text, the role first, the finish reason apart, usage, [DONE].
  auto s = call("POST", "/v1/chat/completions",
                chat_body(R"(,"max_tokens":3,"stream":true,"stream_options":{"include_usage":true})"));
  ASSERT_EQ(s.status, 200) << s.body();
  EXPECT_EQ(s.content_type, "text/event-stream");
  auto frames = test::sse_frames(s.body());
  ASSERT_GE(frames.size(), 4u);
  std::string text;
  for (size_t i = 0; i + 3 < frames.size(); ++i) text += frames[i].json()["choices"][0]["delta"]["content"];
  EXPECT_EQ(text, j["choices"][0]["message"]["content"]);
  EXPECT_EQ(frames[0].json()["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(frames[frames.size() - 3].json()["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(frames[frames.size() - 2].json()["usage"]["total_tokens"], 11);
  EXPECT_EQ(frames.back().data, "[DONE]");
}

TEST_F(V1Routes, ChatRequestBecomesTheJob) {
  auto q = api::openai::parse_chat_request(chat_body(
      R"(,"temperature":0.2,"top_p":0.7,"seed":9,"stop":["x"],"max_tokens":17,"presence_penalty":0.5,
      "frequency_penalty":0.25,"options":{"num_ctx":256,"top_k":3},"keep_alive":0,"truncate":false,
      "response_format":{"type":"json_object"},"tools":[{"type":"function","function":{"name":"f"}}],
      "tool_choice":"required","parallel_tool_calls":false,"reasoning_effort":"medium","logprobs":true,"top_logprobs":4)"));
  ASSERT_TRUE(q.ok()) << q.error().msg;
  http::Request req;
  auto c = v1::begin(*ctx_, req, q->common);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  const sched::Job& job = *c->job;
  EXPECT_FLOAT_EQ(job.sampling.temperature, 0.2f);
  EXPECT_FLOAT_EQ(job.sampling.top_p, 0.7f);
  EXPECT_EQ(job.sampling.top_k, 3);
  EXPECT_FLOAT_EQ(job.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(job.sampling.frequency_penalty, 0.25f);
  EXPECT_TRUE(job.sampling.seed_set);
  EXPECT_EQ(job.sampling.seed, 9u);
  EXPECT_EQ(job.stop, std::vector<std::string>{"x"});
  EXPECT_EQ(job.num_predict, 17);
  EXPECT_EQ(job.spec.n_ctx, 256);
  ASSERT_TRUE(job.keep_alive);
  EXPECT_EQ(job.keep_alive->count(), 0);
  EXPECT_FALSE(job.truncate);
  EXPECT_EQ(job.format, "json");
  EXPECT_EQ(Json::parse(job.tools)[0]["function"]["name"], "f");
  EXPECT_EQ(job.tool_choice, "required");
  EXPECT_FALSE(job.parallel_tool_calls);
  EXPECT_EQ(job.think, "medium");
  EXPECT_EQ(job.top_logprobs, 4);
  // Without the fields: the model's and ollama's defaults, no logprobs, no structure.
  auto plain = api::openai::parse_chat_request(chat_body(""));
  auto d = v1::begin(*ctx_, req, plain->common);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->job->num_predict, -1);
  EXPECT_EQ(d->job->spec.n_ctx, 512);
  EXPECT_FALSE(d->job->keep_alive);
  EXPECT_EQ(d->job->top_logprobs, -1);
  EXPECT_FALSE(d->job->think);
  EXPECT_EQ(d->job->tools, "");
}

TEST_F(V1Routes, MessagesRequestBecomesTheJob) {
  auto q = api::anthropic::parse_messages_request(R"({"model":)" + model_json() + R"(,"max_tokens":2000,
    "temperature":0.4,"top_k":2,"stop_sequences":["##"],"system":"S","messages":[{"role":"user","content":"U"}],
    "tools":[{"name":"t","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"},
    "thinking":{"type":"enabled","budget_tokens":1024},"options":{"num_ctx":300}})");
  ASSERT_TRUE(q.ok()) << q.error().msg;
  http::Request req;
  auto c = anthropic::begin_messages(*ctx_, req, *q);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  const sched::Job& job = *c->job;
  EXPECT_EQ(job.num_predict, 2000);
  EXPECT_FLOAT_EQ(job.sampling.temperature, 0.4f);
  EXPECT_EQ(job.sampling.top_k, 2);
  EXPECT_EQ(job.stop, std::vector<std::string>{"##"});
  EXPECT_EQ(job.spec.n_ctx, 300);
  EXPECT_EQ(job.tool_choice, "required");
  EXPECT_EQ(job.think, "true");
  EXPECT_EQ(job.think_budget, 1024);
  EXPECT_EQ(Json::parse(job.tools)[0]["function"]["parameters"], Json::parse(R"({"type":"object"})"));
}

TEST_F(V1Routes, ErrorsInOpenAIShape) {
  struct Case {
    std::string path, body;
    int status;
    std::string type, part;
  };
  const std::string model = model_json();
  const std::vector<Case> cases = {
      {"/v1/chat/completions", "{bad", 400, "invalid_request_error", "invalid JSON"},
      {"/v1/chat/completions", R"({"model":"nosuch","messages":[{"role":"user","content":"x"}]})", 404,
       "not_found_error", "model 'nosuch' not found"},
      {"/v1/chat/completions", chat_body(R"(,"temperature":3)"), 400, "invalid_request_error", "temperature"},
      {"/v1/chat/completions", chat_body(R"(,"n":3)"), 400, "invalid_request_error", "\"n\""},
      // The worker refuses the prompt: an error before the first byte, still OpenAI's shape.
      {"/v1/chat/completions",
       R"({"model":)" + model + R"(,"truncate":false,"messages":[{"role":"user","content":")" + std::string(600, 'z') +
           R"("}]})",
       400, "invalid_request_error", "num_ctx"},
      {"/v1/completions", R"({"model":)" + model + R"(,"prompt":"x","suffix":"y"})", 400, "invalid_request_error",
       "fill-in-the-middle"},
      {"/v1/embeddings", R"({"model":)" + model + R"(,"input":"x"})", 400, "invalid_request_error", "embeddings"},
      {"/v1/responses", R"({"model":)" + model + R"(,"input":"x","previous_response_id":"r"})", 400,
       "invalid_request_error", "keeps no state"},
      {"/v1/models", "", 503, "server_error", "store"},
  };
  for (const auto& c : cases) {
    auto r = call(c.path == "/v1/models" ? "GET" : "POST", c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.path << " " << c.body.substr(0, 80) << " → " << r.body();
    auto j = Json::parse(r.body(), nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error") && j["error"].is_object()) << r.body();
    EXPECT_EQ(j["error"]["type"], c.type) << r.body();
    EXPECT_TRUE(j["error"].contains("param") && j["error"].contains("code")) << r.body();
    EXPECT_NE(j["error"]["message"].get<std::string>().find(c.part), std::string::npos) << r.body();
  }
  auto nf = call("POST", "/v1/chat/completions", R"({"model":"nosuch","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(Json::parse(nf.body())["error"]["code"], "model_not_found");
}

TEST_F(V1Routes, CompletionsContinueThePromptAsIs) {
  auto r = call("POST", "/v1/completions", R"({"model":)" + model_json() + R"(,"prompt":"hi","max_tokens":4,"echo":true})");
  ASSERT_EQ(r.status, 200) << r.body();
  auto j = Json::parse(r.body());
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 2);  // no template: "hi" is two tokens
  std::string text = j["choices"][0]["text"];
  EXPECT_EQ(text.substr(0, 2), "hi");
  EXPECT_EQ(text.size(), 6u);
}

TEST_F(V1Routes, ResponsesWithInstructions) {
  auto r = call("POST", "/v1/responses",
                R"({"model":)" + model_json() + R"(,"instructions":"S","input":"U","max_output_tokens":2})");
  ASSERT_EQ(r.status, 200) << r.body();
  auto j = Json::parse(r.body());
  EXPECT_EQ(j["object"], "response");
  EXPECT_EQ(j["status"], "incomplete");
  EXPECT_EQ(j["usage"]["input_tokens"], 16);  // "<system>S<user>U"
  EXPECT_EQ(j["output"][0]["content"][0]["text"].get<std::string>().size(), 2u);
  auto s = call("POST", "/v1/responses", R"({"model":)" + model_json() + R"(,"input":"U","max_output_tokens":2,"stream":true})");
  auto frames = test::sse_frames(s.body());
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.front().event, "response.created");
  EXPECT_EQ(frames.back().event, "response.incomplete");
}

TEST_F(V1Routes, AnthropicMessagesAndCountTokens) {
  const std::string body = R"({"model":)" + model_json() +
                           R"(,"max_tokens":3,"system":"S","messages":[{"role":"user","content":"U"}]})";
  auto r = call("POST", "/v1/messages", body, {{"x-api-key", "sk-ignored"}, {"anthropic-version", "2023-06-01"}});
  ASSERT_EQ(r.status, 200) << r.body();
  auto j = Json::parse(r.body());
  EXPECT_EQ(j["type"], "message");
  EXPECT_EQ(j["stop_reason"], "max_tokens");
  EXPECT_EQ(j["usage"], Json::parse(R"({"input_tokens":16,"output_tokens":3})"));
  auto n = call("POST", "/v1/messages/count_tokens", R"({"model":)" + model_json() +
                                                         R"(,"system":"S","messages":[{"role":"user","content":"U"}]})");
  ASSERT_EQ(n.status, 200) << n.body();
  EXPECT_EQ(Json::parse(n.body()), Json::parse(R"({"input_tokens":16})"));
  auto bad = call("POST", "/v1/messages", R"({"model":"nosuch","max_tokens":1,"messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(bad.status, 404);
  EXPECT_EQ(Json::parse(bad.body())["type"], "error");
  EXPECT_EQ(Json::parse(bad.body())["error"]["type"], "not_found_error");
  auto missing = call("POST", "/v1/messages", R"({"model":"m","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(Json::parse(missing.body())["error"]["type"], "invalid_request_error");
}

TEST_F(V1Routes, MetricsMoveByWhatTheRequestsDid) {
  ASSERT_EQ(sample("nurllama_generated_tokens_total"), 0);
  ASSERT_EQ(sample("nurllama_models_resident"), 0);
  auto r = call("POST", "/v1/chat/completions", chat_body(R"(,"max_tokens":5)"));
  ASSERT_EQ(r.status, 200) << r.body();
  auto r2 = call("POST", "/v1/messages", R"({"model":)" + model_json() +
                                             R"(,"max_tokens":2,"messages":[{"role":"user","content":"U"}]})");
  ASSERT_EQ(r2.status, 200) << r2.body();
  EXPECT_EQ(sample("nurllama_generated_tokens_total"), 7);
  EXPECT_EQ(sample("nurllama_prompt_tokens_total"), 8 + 7);  // "<user>yo", "<user>U"
  EXPECT_EQ(sample("nurllama_time_to_first_token_seconds_count"), 2);
  EXPECT_EQ(sample("nurllama_inter_token_seconds_count"), 4 + 1);
  EXPECT_EQ(sample("nurllama_queue_wait_seconds_count"), 2);
  EXPECT_EQ(sample("nurllama_model_loads_total{result=\"ok\"}"), 1);
  EXPECT_EQ(sample("nurllama_models_resident"), 1);
  EXPECT_EQ(sample("nurllama_model_memory_bytes{model=\"" + model_path_ + "\"}"), 100);
  // The worker frees a sequence just after it hands over the reply's last piece, so on a loaded
  // machine the gauge can still read 1 when the reply is complete: it must settle at 0.
  for (int i = 0; i < 500 && sample("nurllama_active_sequences") != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(sample("nurllama_active_sequences"), 0);
  EXPECT_EQ(sample("nurllama_queue_depth"), 0);
  auto m = call("GET", "/metrics", "");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.content_type, "text/plain; version=0.0.4; charset=utf-8");
  // Every line is a comment or `name{labels} value`.
  const std::regex sample_line(R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? \S+$)");
  size_t start = 0;
  const std::string text = m.body();
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    if (line.rfind("# ", 0) != 0) {
      EXPECT_TRUE(std::regex_match(line, sample_line)) << line;
    }
    start = end + 1;
  }
}

TEST_F(V1Routes, CancelledStreamFreesItsSlot) {
  step_delay_ = std::chrono::milliseconds(5);
  http::Request req;
  req.method = "POST";
  req.path = req.target = "/v1/chat/completions";
  req.body = chat_body(R"(,"stream":true,"max_tokens":100000)");
  auto reply = http::handle_request(req, router_, policy_);
  auto& s = std::get<http::Stream>(reply);
  boost::asio::io_context io;
  auto fut = boost::asio::co_spawn(
      boost::asio::make_strand(io),
      [&]() -> boost::asio::awaitable<void> {
        auto first = co_await s.source->next();
        EXPECT_TRUE(first.ok() && first->has_value());
        s.source->cancel();  // what the server does when the client goes away
      },
      boost::asio::use_future);
  io.run();
  fut.get();
  for (int i = 0; i < 400 && sample("nurllama_active_sequences") != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(sample("nurllama_active_sequences"), 0);
  EXPECT_LT(sample("nurllama_generated_tokens_total"), 1000);
}

TEST_F(V1Routes, HealthFollowsThePhase) {
  phase_ = Phase::starting;
  auto a = call("GET", "/health", "");
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(Json::parse(a.body())["status"], "starting");
  phase_ = Phase::serving;
  auto b = call("GET", "/health", "");
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(Json::parse(b.body()), Json::parse(R"({"status":"ok"})"));
  phase_ = Phase::stopping;
  EXPECT_EQ(call("GET", "/health", "").status, 503);
}

}  // namespace
}  // namespace nurl
