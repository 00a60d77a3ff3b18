// POST /v1/chat/completions: messages → the model's chat template → a generate job; the events
// come back as chat.completion (stream:false) or chat.completion.chunk SSE frames.
#include "routes/openai-common.h"
#include "routes/openai.h"

namespace nurl::v1 {

namespace {

Json chunk_base(const ReplyInfo& info) {
  Json j{{"id", info.id},
         {"object", "chat.completion.chunk"},
         {"created", info.created},
         {"model", info.model},
         {"system_fingerprint", "fp_nurllama"}};
  if (info.include_usage) j["usage"] = nullptr;  // as OpenAI: null on every chunk but the usage chunk
  return j;
}

Json chunk(const ReplyInfo& info, Json delta, Json logprobs, Json finish) {
  Json j = chunk_base(info);
  j["choices"] = Json::array(
      {Json{{"index", 0}, {"delta", std::move(delta)}, {"logprobs", std::move(logprobs)}, {"finish_reason", finish}}});
  return j;
}

}  // namespace

EventFormat chat_format(const ReplyInfo& info, bool stream) {
  using Kind = sched::Event::Kind;
  EventFormat fmt;
  if (stream) {
    fmt.chunk = [info](const sched::Event& ev, const ReplyAggregate& agg) {
      Json delta = Json::object();
      if (agg.n_events == 1) delta["role"] = "assistant";
      Json logprobs = nullptr;
      switch (ev.kind) {
        case Kind::text:
          delta["content"] = ev.text;
          if (info.logprobs) logprobs = Json{{"content", logprobs_content(ev.logprobs)}};
          break;
        case Kind::thinking: delta["reasoning_content"] = ev.text; break;
        case Kind::tool_call: delta["tool_calls"] = tool_calls({ev.tool_call}, true); break;
        default: return std::string();
      }
      return api::dump(chunk(info, std::move(delta), std::move(logprobs), nullptr));
    };
    fmt.final = [info](const ReplyAggregate& agg, const sched::DoneInfo& d) {
      // A reply without any event still owes the client the role.
      Json delta = agg.n_events == 0 ? Json{{"role", "assistant"}, {"content", ""}} : Json::object();
      return api::dump(chunk(info, std::move(delta), nullptr, finish_reason(agg, d)));
    };
    if (info.include_usage) {
      fmt.after_final = [info](const ReplyAggregate&, const sched::DoneInfo& d) {
        Json j = chunk_base(info);
        j["choices"] = Json::array();
        j["usage"] = usage(d);
        return std::vector<std::string>{api::dump(j)};
      };
    }
    return fmt;
  }
  fmt.final = [info](const ReplyAggregate& agg, const sched::DoneInfo& d) {
    Json msg{{"role", "assistant"}};
    msg["content"] = agg.text.empty() && !agg.tool_calls.empty() ? Json(nullptr) : Json(agg.text);
    if (!agg.thinking.empty()) msg["reasoning_content"] = agg.thinking;
    if (!agg.tool_calls.empty()) msg["tool_calls"] = tool_calls(agg.tool_calls, false);
    Json logprobs = info.logprobs ? Json{{"content", logprobs_content(agg.logprobs)}} : Json(nullptr);
    Json choice{{"index", 0}, {"message", msg}, {"logprobs", logprobs}, {"finish_reason", finish_reason(agg, d)}};
    return api::dump(Json{{"id", info.id},
                          {"object", "chat.completion"},
                          {"created", info.created},
                          {"model", info.model},
                          {"system_fingerprint", "fp_nurllama"},
                          {"choices", Json::array({choice})},
                          {"usage", usage(d)}});
  };
  return fmt;
}

namespace {

http::Reply chat_completions(RouteContext& ctx, const http::Request& req) {
  auto parsed = api::openai::parse_chat_request(req.body);
  if (!parsed.ok()) return error_reply(parsed.error());
  auto& q = *parsed;
  auto c = begin(ctx, req, q.common);
  if (!c.ok()) return error_reply(c.error());
  c->job->prepare = chat_prepare(chat_messages(q.messages), c->model, *c->job);
  ReplyInfo info{random_id("chatcmpl-"), q.common.model, unix_now(), q.common.include_usage,
                 q.common.structured.top_logprobs >= 0};
  return submit(ctx, c->job, chat_format(info, q.common.stream), q.common.stream);
}

}  // namespace

void add_chat_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/v1/chat/completions", [&ctx](const http::Request& q) { return chat_completions(ctx, q); });
}

}  // namespace nurl::v1
