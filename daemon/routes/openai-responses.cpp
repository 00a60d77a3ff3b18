// POST /v1/responses (stateless): input items → chat messages → a generate job; the events come
// back as a `response` object or as the Responses event stream (named SSE events, each with a
// sequence_number). Output items open as the events arrive: reasoning (thinking events), a
// message with one output_text part (text events), a function_call per tool call.
#include "routes/openai-common.h"
#include "core/json-text.h"
#include "routes/openai.h"

namespace nurl::v1 {

namespace {

using Kind = sched::Event::Kind;

Json response_object(const ResponseInfo& info, const std::string& status, Json output, Json usage_json,
                     Json incomplete) {
  Json r = info.request_echo.is_object() ? info.request_echo : Json::object();
  r["id"] = info.reply.id;
  r["object"] = "response";
  r["created_at"] = info.reply.created;
  r["status"] = status;
  r["model"] = info.reply.model;
  r["output"] = std::move(output);
  r["usage"] = std::move(usage_json);
  r["error"] = nullptr;
  r["incomplete_details"] = std::move(incomplete);
  return r;
}

Json response_usage(const sched::DoneInfo& d) {
  return Json{{"input_tokens", d.prompt_eval_count},
              {"input_tokens_details", {{"cached_tokens", 0}}},
              {"output_tokens", d.eval_count},
              {"output_tokens_details", {{"reasoning_tokens", 0}}},
              {"total_tokens", d.prompt_eval_count + d.eval_count}};
}

Json incomplete_of(const sched::DoneInfo& d) {
  return d.reason == "length" ? Json{{"reason", "max_output_tokens"}} : Json(nullptr);
}

Json message_item(const std::string& id, const std::string& text, const std::string& status) {
  Json content = Json::array();
  if (status == "completed") content.push_back({{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}});
  return Json{{"type", "message"}, {"id", id}, {"status", status}, {"role", "assistant"}, {"content", content}};
}

Json reasoning_item(const std::string& id, const std::string& text) {
  Json content = Json::array();
  if (!text.empty()) content.push_back({{"type", "reasoning_text"}, {"text", text}});
  return Json{{"type", "reasoning"}, {"id", id}, {"summary", Json::array()}, {"content", content}};
}

Json call_item(const std::string& id, const sched::ToolCall& c, const std::string& status) {
  return Json{{"type", "function_call"}, {"id", id},     {"call_id", c.id}, {"name", c.name},
              {"arguments", status == "completed" ? c.arguments : ""}, {"status", status}};
}

// The stream's open items and numbering.
struct StreamState {
  int seq = 0;
  bool started = false;
  Kind open = Kind::done;  // the kind of the open item (done: none)
  std::string item_id;
  std::string text;        // the open item's text so far
  Json output = Json::array();  // finished items
  PayloadLines out;

  void emit(Json ev) {
    ev["sequence_number"] = seq++;
    out.add(ev);
  }
  int index() const { return static_cast<int>(output.size()); }

  void start(const ResponseInfo& info) {
    if (started) return;
    started = true;
    Json r = response_object(info, "in_progress", Json::array(), nullptr, nullptr);
    emit({{"type", "response.created"}, {"response", r}});
    emit({{"type", "response.in_progress"}, {"response", r}});
  }

  void close() {
    if (open == Kind::text) {
      Json part{{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}};
      emit({{"type", "response.output_text.done"}, {"item_id", item_id}, {"output_index", index()},
            {"content_index", 0}, {"text", text}, {"logprobs", Json::array()}});
      emit({{"type", "response.content_part.done"}, {"item_id", item_id}, {"output_index", index()},
            {"content_index", 0}, {"part", part}});
      Json item = message_item(item_id, text, "completed");
      emit({{"type", "response.output_item.done"}, {"output_index", index()}, {"item", item}});
      output.push_back(std::move(item));
    } else if (open == Kind::thinking) {
      emit({{"type", "response.reasoning_text.done"}, {"item_id", item_id}, {"output_index", index()},
            {"content_index", 0}, {"text", text}});
      Json item = reasoning_item(item_id, text);
      emit({{"type", "response.output_item.done"}, {"output_index", index()}, {"item", item}});
      output.push_back(std::move(item));
    }
    open = Kind::done;
    text.clear();
  }

  void open_item(Kind k) {
    if (open == k) return;
    close();
    open = k;
    if (k == Kind::text) {
      item_id = random_id("msg_");
      emit({{"type", "response.output_item.added"}, {"output_index", index()},
            {"item", message_item(item_id, "", "in_progress")}});
      emit({{"type", "response.content_part.added"}, {"item_id", item_id}, {"output_index", index()},
            {"content_index", 0}, {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", Json::array()}}}});
    } else {
      item_id = random_id("rs_");
      emit({{"type", "response.output_item.added"}, {"output_index", index()}, {"item", reasoning_item(item_id, "")}});
    }
  }

  void call(const sched::ToolCall& c) {
    close();
    const std::string id = random_id("fc_");
    emit({{"type", "response.output_item.added"}, {"output_index", index()}, {"item", call_item(id, c, "in_progress")}});
    emit({{"type", "response.function_call_arguments.delta"}, {"item_id", id}, {"output_index", index()},
          {"delta", c.arguments}});
    emit({{"type", "response.function_call_arguments.done"}, {"item_id", id}, {"output_index", index()},
          {"name", c.name}, {"arguments", c.arguments}});
    Json item = call_item(id, c, "completed");
    emit({{"type", "response.output_item.done"}, {"output_index", index()}, {"item", item}});
    output.push_back(std::move(item));
  }
};

}  // namespace

EventFormat responses_format(const ResponseInfo& info, bool stream) {
  EventFormat fmt;
  if (!stream) {
    fmt.final = [info](const ReplyAggregate& agg, const sched::DoneInfo& d) {
      Json output = Json::array();
      if (!agg.thinking.empty()) output.push_back(reasoning_item(random_id("rs_"), agg.thinking));
      if (!agg.text.empty() || agg.tool_calls.empty()) {
        Json item = message_item(random_id("msg_"), agg.text, "completed");
        if (info.reply.logprobs) item["content"][0]["logprobs"] = logprobs_content(agg.logprobs);
        output.push_back(std::move(item));
      }
      for (const auto& c : agg.tool_calls) output.push_back(call_item(random_id("fc_"), c, "completed"));
      const std::string status = d.reason == "length" ? "incomplete" : "completed";
      return api::dump(response_object(info, status, std::move(output), response_usage(d), incomplete_of(d)));
    };
    return fmt;
  }
  auto st = std::make_shared<StreamState>();
  fmt.chunk = [info, st](const sched::Event& ev, const ReplyAggregate&) {
    st->start(info);
    if (ev.kind == Kind::tool_call) {
      st->call(ev.tool_call);
    } else if (ev.kind == Kind::text || ev.kind == Kind::thinking) {
      st->open_item(ev.kind);
      st->text += ev.text;
      if (ev.kind == Kind::text) {
        Json lp = info.reply.logprobs ? logprobs_content(ev.logprobs) : Json::array();
        st->emit({{"type", "response.output_text.delta"}, {"item_id", st->item_id}, {"output_index", st->index()},
                  {"content_index", 0}, {"delta", ev.text}, {"logprobs", lp}});
      } else {
        st->emit({{"type", "response.reasoning_text.delta"}, {"item_id", st->item_id},
                  {"output_index", st->index()}, {"content_index", 0}, {"delta", ev.text}});
      }
    }
    return st->out.take();
  };
  fmt.final = [info, st](const ReplyAggregate&, const sched::DoneInfo& d) {
    st->start(info);
    st->close();
    const bool incomplete = d.reason == "length";
    Json r = response_object(info, incomplete ? "incomplete" : "completed", st->output, response_usage(d),
                             incomplete_of(d));
    st->emit({{"type", incomplete ? "response.incomplete" : "response.completed"}, {"response", r}});
    return st->out.take();
  };
  return fmt;
}

namespace {

// What the response object repeats from the request.
Json request_echo(const api::openai::ResponsesRequest& q) {
  const auto& s = q.common.structured;
  Json format = s.format.empty()      ? Json{{"type", "text"}}
                : s.format == "json" ? Json{{"type", "json_object"}}
                                      : Json{{"type", "json_schema"}, {"schema", parse_json(s.format)}};
  Json tools = Json::array();
  if (!s.tools.empty())
    for (const auto& t : parse_json(s.tools)) {
      Json f = t["function"];
      f["type"] = "function";
      tools.push_back(std::move(f));
    }
  const auto& o = q.common.options;
  return Json{{"instructions", q.instructions.empty() ? Json(nullptr) : Json(q.instructions)},
              {"max_output_tokens", o.num_predict ? Json(*o.num_predict) : Json(nullptr)},
              {"parallel_tool_calls", s.parallel_tool_calls},
              {"temperature", o.temperature ? Json(*o.temperature) : Json(nullptr)},
              {"top_p", o.top_p ? Json(*o.top_p) : Json(nullptr)},
              {"tool_choice", s.tool_choice == "auto" || s.tool_choice == "none" || s.tool_choice == "required"
                                  ? Json(s.tool_choice)
                                  : Json{{"type", "function"}, {"name", s.tool_choice}}},
              {"tools", tools},
              {"text", {{"format", format}}},
              {"reasoning", s.think.empty() ? Json(nullptr) : Json{{"effort", s.think}}},
              {"previous_response_id", nullptr},
              {"store", false},
              {"metadata", Json::object()}};
}

http::Reply responses(RouteContext& ctx, const http::Request& req) {
  auto parsed = api::openai::parse_responses_request(req.body);
  if (!parsed.ok()) return error_reply(parsed.error());
  auto& q = *parsed;
  auto c = begin(ctx, req, q.common);
  if (!c.ok()) return error_reply(c.error());
  auto turns = q.input;
  if (!q.instructions.empty()) turns.insert(turns.begin(), api::ChatTurn{"system", q.instructions, "", {}, "", ""});
  c->job->prepare = chat_prepare(chat_messages(turns), c->model, *c->job);
  ResponseInfo info{{random_id("resp_"), q.common.model, unix_now(), false, q.common.structured.top_logprobs >= 0},
                    request_echo(q)};
  auto reply = submit(ctx, c->job, responses_format(info, q.common.stream), q.common.stream, sse_event_framing());
  if (auto* s = std::get_if<http::Stream>(&reply); s && q.common.stream) {
    // After the first byte an error is its own event: {"type":"error","code","message","param"}.
    s->error_chunk = [](const Error& e) {
      return sse_event_framing().frame(api::dump(
          Json{{"type", "error"}, {"code", code_name(e.code)}, {"message", e.msg}, {"param", nullptr}}));
    };
  }
  return reply;
}

}  // namespace

void add_responses_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/v1/responses", [&ctx](const http::Request& q) { return responses(ctx, q); });
}

}  // namespace nurl::v1
