#include "routes/generate.h"

#include "api/ollama.h"
#include "core/json-text.h"
#include "routes/event-stream.h"
#include "routes/fill-in-middle.h"
#include "routes/inference.h"

namespace nurl {

namespace {

using api::dump;
using api::Json;
using Clock = std::chrono::steady_clock;

std::string now_text() { return api::format_time(std::chrono::system_clock::now()); }


http::Reply submit(RouteContext& ctx, const std::shared_ptr<sched::Job>& job, EventFormat fmt, bool single) {
  auto r = submit_job(ctx, job);
  if (!r.ok()) return http::error_response(r.error());
  return ndjson_stream(job->out, std::move(fmt), single);
}

// ollama's logprobs: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}].
Json logprobs_json(const std::vector<sched::TokenLogprob>& lps) {
  auto bytes = [](const std::string& s) {
    Json b = Json::array();
    for (unsigned char c : s) b.push_back(static_cast<int>(c));
    return b;
  };
  Json out = Json::array();
  for (const auto& lp : lps) {
    Json top = Json::array();
    for (const auto& [t, l] : lp.top) top.push_back({{"token", t}, {"logprob", l}, {"bytes", bytes(t)}});
    out.push_back({{"token", lp.token}, {"logprob", lp.logprob}, {"bytes", bytes(lp.token)}, {"top_logprobs", top}});
  }
  return out;
}

// ollama's tool calls: [{id, function: {index, name, arguments: {...}}}].
Json tool_calls_json(const std::vector<sched::ToolCall>& calls) {
  Json out = Json::array();
  for (const auto& c : calls) {
    Json args = parse_json(c.arguments);
    if (args.is_discarded()) args = Json::object();
    out.push_back({{"id", c.id}, {"function", {{"index", c.index}, {"name", c.name}, {"arguments", args}}}});
  }
  return out;
}

void apply_output(sched::Job& job, const api::OutputOptions& o) {
  job.format = o.format;
  job.think = o.think;
  job.top_logprobs = o.top_logprobs;
}

// ollama's messages as the scheduler's (tool calls, tool results and earlier thinking kept).
std::vector<sched::ChatMessage> chat_messages(const std::vector<api::Message>& in) {
  std::vector<sched::ChatMessage> out;
  for (const auto& m : in) {
    sched::ChatMessage c(m.role, m.content);
    c.thinking = m.thinking;
    c.tool_name = m.tool_name;
    c.tool_call_id = m.tool_call_id;
    for (const auto& t : m.tool_calls) c.tool_calls.push_back({t.id, t.name, t.arguments, t.index});
    out.push_back(std::move(c));
  }
  return out;
}

http::Reply generate(RouteContext& ctx, const http::Request& req) {
  const auto t0 = Clock::now();
  std::vector<std::string> ignored;
  auto parsed = api::parse_generate_request(req.body, &ignored);
  if (!parsed.ok()) return http::error_response(parsed.error());
  auto g = std::move(*parsed);
  log_ignored_options(ctx, ignored);
  auto c = begin_inference(ctx, req, {g.model, g.options, g.keep_alive, g.truncate});
  if (!c.ok()) return http::error_response(c.error());
  auto job = c->job;
  const std::string model_name = g.model;

  if (g.prompt.empty() && g.context.empty() && !g.debug_render_only) {
    make_load_job(*job);
    EventFormat fmt;
    fmt.final = [model_name](const ReplyAggregate&, const sched::DoneInfo& d) {
      return dump(Json{{"model", model_name}, {"created_at", now_text()}, {"response", ""}, {"done", true},
                       {"done_reason", d.reason}});
    };
    return submit(ctx, job, std::move(fmt), true);
  }

  if (!g.suffix.empty()) {
    // Fill-in-the-middle: the vocabulary's FIM tokens around prompt and suffix (no template).
    EventFormat fmt;
    const bool single = !g.stream;
    job->prepare = fim_prepare(g.prompt, g.suffix);
    apply_output(*job, g.output);
    fmt.chunk = [model_name](const sched::Event& ev, const ReplyAggregate&) {
      if (ev.kind != sched::Event::Kind::text) return std::string();
      return dump(Json{{"model", model_name}, {"created_at", now_text()}, {"response", ev.text}, {"done", false}});
    };
    fmt.final = [model_name, t0, single](const ReplyAggregate& agg, const sched::DoneInfo& d) {
      Json j{{"model", model_name}, {"created_at", now_text()}, {"response", single ? agg.text : ""}, {"done", true}};
      put_done_stats(j, d, t0);
      return dump(j);
    };
    return submit(ctx, job, std::move(fmt), single);
  }

  std::string system = g.system.empty() ? c->model.system : g.system;
  std::string tmpl = g.template_override.empty() ? c->model.template_override : g.template_override;
  job->render_only = g.debug_render_only;
  apply_output(*job, g.output);
  job->prepare = [prompt = g.prompt, system, tmpl, raw = g.raw, context = g.context,
                  think = g.output.think](const sched::LoadedModel& m) -> Result<sched::PreparedPrompt> {
    sched::PreparedPrompt p;
    bool templated = !raw && (m.facts().has_chat_template || !tmpl.empty());
    if (templated) {
      std::vector<sched::ChatMessage> msgs;
      if (!system.empty()) msgs.push_back({"system", system});
      msgs.push_back({"user", prompt});
      sched::ChatRender r;
      r.template_override = tmpl;
      r.think = think;
      NURL_ASSIGN(p.rendered, m.render_chat(msgs, r));
      p.template_override = tmpl;
    } else {
      p.rendered = (raw || system.empty()) ? prompt : system + "\n\n" + prompt;
    }
    // A continued conversation (context) already starts with the special tokens.
    NURL_ASSIGN(auto toks, m.tokenize(p.rendered, context.empty()));
    p.tokens = context;
    p.tokens.insert(p.tokens.end(), toks.begin(), toks.end());
    return p;
  };

  EventFormat fmt;
  if (g.debug_render_only) {
    fmt.final = [model_name](const ReplyAggregate& agg, const sched::DoneInfo&) {
      return dump(Json{{"model", model_name},
                       {"created_at", now_text()},
                       {"response", ""},
                       {"done", true},
                       {"debug_info", {{"rendered_template", agg.text}, {"image_count", 0}}}});
    };
    return submit(ctx, job, std::move(fmt), true);
  }
  const bool single = !g.stream;
  fmt.chunk = [model_name](const sched::Event& ev, const ReplyAggregate&) {
    if (ev.kind == sched::Event::Kind::tool_call) return std::string();
    const bool thinking = ev.kind == sched::Event::Kind::thinking;
    Json j{{"model", model_name}, {"created_at", now_text()}, {"response", thinking ? "" : ev.text}, {"done", false}};
    if (thinking) j["thinking"] = ev.text;
    if (!ev.logprobs.empty()) j["logprobs"] = logprobs_json(ev.logprobs);
    return dump(j);
  };
  fmt.final = [model_name, t0, single](const ReplyAggregate& agg, const sched::DoneInfo& d) {
    Json j{{"model", model_name}, {"created_at", now_text()}, {"response", single ? agg.text : ""}, {"done", true}};
    if (single && !agg.thinking.empty()) j["thinking"] = agg.thinking;
    if (single && !agg.logprobs.empty()) j["logprobs"] = logprobs_json(agg.logprobs);
    put_done_stats(j, d, t0);
    j["context"] = d.context;
    return dump(j);
  };
  return submit(ctx, job, std::move(fmt), single);
}

http::Reply chat(RouteContext& ctx, const http::Request& req) {
  const auto t0 = Clock::now();
  std::vector<std::string> ignored;
  auto parsed = api::parse_chat_request(req.body, &ignored);
  if (!parsed.ok()) return http::error_response(parsed.error());
  auto q = std::move(*parsed);
  log_ignored_options(ctx, ignored);
  auto c = begin_inference(ctx, req, {q.model, q.options, q.keep_alive, q.truncate});
  if (!c.ok()) return http::error_response(c.error());
  auto job = c->job;
  const std::string model_name = q.model;

  if (q.messages.empty() && !q.debug_render_only) {
    make_load_job(*job);
    EventFormat fmt;
    fmt.final = [model_name](const ReplyAggregate&, const sched::DoneInfo& d) {
      return dump(Json{{"model", model_name},
                       {"created_at", now_text()},
                       {"message", {{"role", "assistant"}, {"content", ""}}},
                       {"done_reason", d.reason},
                       {"done", true}});
    };
    return submit(ctx, job, std::move(fmt), true);
  }

  std::vector<sched::ChatMessage> msgs;
  msgs = chat_messages(q.messages);
  job->render_only = q.debug_render_only;
  apply_output(*job, q.output);
  job->tools = q.tools;
  job->prepare = chat_prepare(std::move(msgs), c->model, *job);

  EventFormat fmt;
  if (q.debug_render_only) {
    fmt.final = [model_name](const ReplyAggregate& agg, const sched::DoneInfo&) {
      return dump(Json{{"model", model_name},
                       {"created_at", now_text()},
                       {"message", {{"role", "assistant"}, {"content", ""}}},
                       {"done", true},
                       {"debug_info", {{"rendered_template", agg.text}, {"image_count", 0}}}});
    };
    return submit(ctx, job, std::move(fmt), true);
  }
  const bool single = !q.stream;
  fmt.chunk = [model_name](const sched::Event& ev, const ReplyAggregate&) {
    using Kind = sched::Event::Kind;
    Json msg{{"role", "assistant"}, {"content", ev.kind == Kind::text ? ev.text : ""}};
    if (ev.kind == Kind::thinking) msg["thinking"] = ev.text;
    if (ev.kind == Kind::tool_call) msg["tool_calls"] = tool_calls_json({ev.tool_call});
    Json j{{"model", model_name}, {"created_at", now_text()}, {"message", msg}, {"done", false}};
    if (!ev.logprobs.empty()) j["logprobs"] = logprobs_json(ev.logprobs);
    return dump(j);
  };
  fmt.final = [model_name, t0, single](const ReplyAggregate& agg, const sched::DoneInfo& d) {
    Json msg{{"role", "assistant"}, {"content", single ? agg.text : ""}};
    if (single && !agg.thinking.empty()) msg["thinking"] = agg.thinking;
    if (single && !agg.tool_calls.empty()) msg["tool_calls"] = tool_calls_json(agg.tool_calls);
    Json j{{"model", model_name}, {"created_at", now_text()}, {"message", msg}, {"done", true}};
    if (single && !agg.logprobs.empty()) j["logprobs"] = logprobs_json(agg.logprobs);
    put_done_stats(j, d, t0);
    return dump(j);
  };
  return submit(ctx, job, std::move(fmt), single);
}

}  // namespace

void add_generate_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/api/generate", [&ctx](const http::Request& req) { return generate(ctx, req); });
  r.add("POST", "/api/chat", [&ctx](const http::Request& req) { return chat(ctx, req); });
}

}  // namespace nurl
