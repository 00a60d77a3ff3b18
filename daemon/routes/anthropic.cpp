#include "routes/anthropic.h"

#include "api/anthropic.h"
#include "core/json-text.h"
#include "routes/inference.h"
#include "routes/openai-common.h"

namespace nurl {

namespace anthropic {

namespace {

// Insertion order, as Anthropic writes its objects; a tool_use input keeps the order it was
// generated in (a schema's declared order).
using Json = api::OrderedJson;
using Kind = sched::Event::Kind;

std::string error_text(int status, const std::string& message) {
  return api::dump(api::anthropic::error_body(status, message));
}

http::Response error_reply(const Error& e) { return nurl::error_reply(e, error_text); }

std::string stop_reason(const ReplyAggregate& agg, const sched::DoneInfo& d) {
  if (!agg.tool_calls.empty()) return "tool_use";
  if (!d.stop_sequence.empty()) return "stop_sequence";
  return d.reason == "length" ? "max_tokens" : "end_turn";
}

Json stop_sequence(const sched::DoneInfo& d) {
  return d.stop_sequence.empty() ? Json(nullptr) : Json(d.stop_sequence);
}

Json tool_use(const sched::ToolCall& c, bool with_input) {
  Json input = Json::object();
  if (with_input) {
    input = parse_ordered_json(c.arguments);
    if (!input.is_object()) input = Json::object();
  }
  return Json{{"type", "tool_use"}, {"id", c.id.empty() ? v1::random_id("toolu_") : c.id}, {"name", c.name},
              {"input", input}};
}

Json message(const MessageInfo& info, Json content, Json reason, Json stop_seq, Json usage) {
  return Json{{"id", info.id},         {"type", "message"},           {"role", "assistant"},
              {"model", info.model},   {"content", std::move(content)}, {"stop_reason", std::move(reason)},
              {"stop_sequence", std::move(stop_seq)}, {"usage", std::move(usage)}};
}

// The open content block of a stream.
struct StreamState {
  bool started = false;
  int index = -1;          // of the open block
  Kind open = Kind::done;  // done: none open
  PayloadLines out;

  void emit(const Json& ev) { out.add(ev); }
  void start(const MessageInfo& info) {
    if (started) return;
    started = true;
    emit({{"type", "message_start"},
          {"message", message(info, Json::array(), nullptr, nullptr, {{"input_tokens", 0}, {"output_tokens", 0}})}});
  }
  void close() {
    if (open == Kind::done) return;
    emit({{"type", "content_block_stop"}, {"index", index}});
    open = Kind::done;
  }
  void open_block(Kind k, Json block) {
    close();
    open = k;
    emit({{"type", "content_block_start"}, {"index", ++index}, {"content_block", std::move(block)}});
  }
};

}  // namespace

EventFormat messages_format(const MessageInfo& info, bool stream) {
  EventFormat fmt;
  if (!stream) {
    fmt.final = [info](const ReplyAggregate& agg, const sched::DoneInfo& d) {
      Json content = Json::array();
      if (!agg.thinking.empty()) content.push_back({{"type", "thinking"}, {"thinking", agg.thinking}, {"signature", ""}});
      if (!agg.text.empty() || agg.tool_calls.empty()) content.push_back({{"type", "text"}, {"text", agg.text}});
      for (const auto& c : agg.tool_calls) content.push_back(tool_use(c, true));
      return api::dump(message(info, std::move(content), stop_reason(agg, d), stop_sequence(d),
                               {{"input_tokens", d.prompt_eval_count}, {"output_tokens", d.eval_count}}));
    };
    return fmt;
  }
  auto st = std::make_shared<StreamState>();
  fmt.chunk = [info, st](const sched::Event& ev, const ReplyAggregate&) {
    st->start(info);
    if (ev.kind == Kind::tool_call) {
      st->open_block(Kind::tool_call, tool_use(ev.tool_call, false));
      st->emit({{"type", "content_block_delta"},
                {"index", st->index},
                {"delta", {{"type", "input_json_delta"}, {"partial_json", ev.tool_call.arguments}}}});
      st->close();
    } else if (ev.kind == Kind::text) {
      if (st->open != Kind::text) st->open_block(Kind::text, {{"type", "text"}, {"text", ""}});
      st->emit({{"type", "content_block_delta"}, {"index", st->index}, {"delta", {{"type", "text_delta"}, {"text", ev.text}}}});
    } else if (ev.kind == Kind::thinking) {
      if (st->open != Kind::thinking)
        st->open_block(Kind::thinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
      st->emit({{"type", "content_block_delta"},
                {"index", st->index},
                {"delta", {{"type", "thinking_delta"}, {"thinking", ev.text}}}});
    }
    return st->out.take();
  };
  fmt.final = [info, st](const ReplyAggregate& agg, const sched::DoneInfo& d) {
    st->start(info);
    if (st->index < 0) st->open_block(Kind::text, {{"type", "text"}, {"text", ""}});  // always one block
    st->close();
    st->emit({{"type", "message_delta"},
              {"delta", {{"stop_reason", stop_reason(agg, d)}, {"stop_sequence", stop_sequence(d)}}},
              {"usage", {{"input_tokens", d.prompt_eval_count}, {"output_tokens", d.eval_count}}}});
    st->emit({{"type", "message_stop"}});
    return st->out.take();
  };
  return fmt;
}

Result<Inference> begin_messages(RouteContext& ctx, const http::Request& req, const api::anthropic::MessagesRequest& q) {
  log_ignored_options(ctx, q.ignored_options);
  NURL_ASSIGN(Inference c, begin_inference(ctx, req, {q.model, q.options, q.keep_alive, q.truncate}));
  apply_structured(*c.job, q.structured);
  c.job->prepare = chat_prepare(chat_messages(q.messages), c.model, *c.job);
  return c;
}

namespace {

http::Reply submit(RouteContext& ctx, const std::shared_ptr<sched::Job>& job, EventFormat fmt, bool stream) {
  return submit_sse(ctx, job, std::move(fmt), sse_event_framing(), stream, error_text);
}

http::Reply messages(RouteContext& ctx, const http::Request& req) {
  auto parsed = api::anthropic::parse_messages_request(req.body);
  if (!parsed.ok()) return error_reply(parsed.error());
  auto c = begin_messages(ctx, req, *parsed);
  if (!c.ok()) return error_reply(c.error());
  MessageInfo info{v1::random_id("msg_"), parsed->model};
  return submit(ctx, c->job, messages_format(info, parsed->stream), parsed->stream);
}

// The prompt is rendered and tokenized on the model's worker, exactly as /v1/messages would.
http::Reply count_tokens(RouteContext& ctx, const http::Request& req) {
  auto parsed = api::anthropic::parse_count_tokens_request(req.body);
  if (!parsed.ok()) return error_reply(parsed.error());
  auto c = begin_messages(ctx, req, *parsed);
  if (!c.ok()) return error_reply(c.error());
  c->job->render_only = true;
  EventFormat fmt;
  fmt.final = [](const ReplyAggregate&, const sched::DoneInfo& d) {
    return api::dump(Json{{"input_tokens", d.prompt_eval_count}});
  };
  return submit(ctx, c->job, std::move(fmt), false);
}

}  // namespace

}  // namespace anthropic

void add_anthropic_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/v1/messages", [&ctx](const http::Request& q) { return anthropic::messages(ctx, q); });
  r.add("POST", "/v1/messages/count_tokens", [&ctx](const http::Request& q) { return anthropic::count_tokens(ctx, q); });
}

}  // namespace nurl
