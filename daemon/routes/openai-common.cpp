#include "routes/openai-common.h"

#include <chrono>
#include <random>

namespace nurl::v1 {

http::Response error_reply(const Error& e) { return nurl::error_reply(e, error_text); }

std::string error_text(int status, const std::string& message) {
  return api::dump(api::openai::error_body(status, message));
}

std::string random_id(std::string_view prefix) {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  std::uniform_int_distribution<size_t> pick(0, sizeof kChars - 2);
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kChars[pick(gen)];
  return id;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string finish_reason(const ReplyAggregate& agg, const sched::DoneInfo& done) {
  if (!agg.tool_calls.empty()) return "tool_calls";
  return done.reason == "length" ? "length" : "stop";
}

Json usage(const sched::DoneInfo& done) {
  return Json{{"prompt_tokens", done.prompt_eval_count},
              {"completion_tokens", done.eval_count},
              {"total_tokens", done.prompt_eval_count + done.eval_count}};
}

namespace {

Json bytes_of(const std::string& s) {
  Json b = Json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

}  // namespace

Json logprobs_content(const std::vector<sched::TokenLogprob>& lps) {
  Json out = Json::array();
  for (const auto& t : lps) {
    Json top = Json::array();
    for (const auto& [tok, lp] : t.top) top.push_back({{"token", tok}, {"logprob", lp}, {"bytes", bytes_of(tok)}});
    out.push_back({{"token", t.token}, {"logprob", t.logprob}, {"bytes", bytes_of(t.token)}, {"top_logprobs", top}});
  }
  return out;
}

Json tool_calls(const std::vector<sched::ToolCall>& calls, bool with_index) {
  Json out = Json::array();
  for (const auto& c : calls) {
    Json j{{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}};
    if (with_index) j["index"] = c.index;
    out.push_back(std::move(j));
  }
  return out;
}

InferenceParams inference_params(const api::openai::Common& c) {
  return InferenceParams{c.model, c.options, c.keep_alive, c.truncate};
}

Result<Inference> begin(RouteContext& ctx, const http::Request& req, const api::openai::Common& c) {
  log_ignored_options(ctx, c.ignored_options);
  NURL_ASSIGN(Inference inf, begin_inference(ctx, req, inference_params(c)));
  apply_structured(*inf.job, c.structured);
  return inf;
}

http::Reply submit(RouteContext& ctx, const std::shared_ptr<sched::Job>& job, EventFormat fmt, bool stream,
                   Framing framing) {
  return submit_sse(ctx, job, std::move(fmt), std::move(framing), stream, error_text);
}

}  // namespace nurl::v1
