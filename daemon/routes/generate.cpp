#include "routes/generate.h"

#include "api/ollama.h"
#include "routes/event-stream.h"
#include "scheduler/scheduler.h"

namespace nurl {

namespace {

using api::Json;
using Clock = std::chrono::steady_clock;

constexpr size_t kChannelCapacity = 256;

std::string now_text() { return api::format_time(std::chrono::system_clock::now()); }

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void put_stats(Json& j, const sched::DoneInfo& d, Clock::time_point t0) {
  j["done_reason"] = d.reason;
  j["total_duration"] = std::chrono::duration_cast<Nanos>(Clock::now() - t0).count();
  j["load_duration"] = d.load_duration.count();
  j["prompt_eval_count"] = d.prompt_eval_count;
  j["prompt_eval_duration"] = d.prompt_eval_duration.count();
  j["eval_count"] = d.eval_count;
  j["eval_duration"] = d.eval_duration.count();
  // Added field (not in ollama): how many prompt tokens were dropped to fit num_ctx.
  if (d.truncated_tokens > 0) j["truncated_prompt_tokens"] = d.truncated_tokens;
}

sched::Sampling sampling_from(const api::Options& o) {
  sched::Sampling s;
  if (o.temperature) s.temperature = static_cast<float>(*o.temperature);
  if (o.top_k) s.top_k = *o.top_k;
  if (o.top_p) s.top_p = static_cast<float>(*o.top_p);
  if (o.min_p) s.min_p = static_cast<float>(*o.min_p);
  if (o.typical_p) s.typical_p = static_cast<float>(*o.typical_p);
  if (o.repeat_penalty) s.repeat_penalty = static_cast<float>(*o.repeat_penalty);
  if (o.repeat_last_n) s.repeat_last_n = *o.repeat_last_n;
  if (o.presence_penalty) s.presence_penalty = static_cast<float>(*o.presence_penalty);
  if (o.frequency_penalty) s.frequency_penalty = static_cast<float>(*o.frequency_penalty);
  if (o.seed && *o.seed >= 0) {
    s.seed = static_cast<uint64_t>(*o.seed);
    s.seed_set = true;
  }
  return s;
}

void log_ignored(RouteContext& ctx, const std::vector<std::string>& ignored) {
  for (const auto& name : ignored) ctx.log.info("request: option \"" + name + "\" is not used; ignoring it");
}

// Everything generate and chat share after parsing: resolve, build the job's common fields.
struct Common {
  ModelRef model;
  api::Options options;
  std::shared_ptr<sched::Job> job;
};

Result<Common> common_setup(RouteContext& ctx, const http::Request& req, const std::string& name,
                            const api::Options& request_options, std::optional<Nanos> keep_alive, bool truncate) {
  auto cfg = ctx.config.get();
  NURL_ASSIGN(ModelRef m, resolve_model(name, req.peer, cfg->allow_model_paths, ctx.store_resolve));
  Common c;
  c.options = m.defaults;
  c.options.merge(request_options);
  c.model = std::move(m);
  auto job = std::make_shared<sched::Job>();
  job->model_name = name;
  job->spec.path = c.model.path;
  job->spec.n_ctx = c.options.num_ctx.value_or(cfg->context_length);
  job->spec.n_parallel = cfg->num_parallel;
  job->keep_alive = keep_alive;
  job->sampling = sampling_from(c.options);
  job->num_predict = c.options.num_predict.value_or(-1);
  if (job->num_predict < 0) job->num_predict = -1;
  job->stop = c.options.stop.value_or(std::vector<std::string>{});
  job->truncate = truncate;
  job->out = std::make_shared<sched::Channel<sched::Event>>(kChannelCapacity);
  c.job = std::move(job);
  return c;
}

http::Reply submit(RouteContext& ctx, const std::shared_ptr<sched::Job>& job, EventFormat fmt, bool single) {
  if (!ctx.scheduler) return http::error_response(500, "no scheduler");
  auto r = ctx.scheduler->submit(job);
  if (!r.ok()) return http::error_response(r.error());
  return ndjson_stream(job->out, std::move(fmt), single);
}

// Empty prompt / no messages: load the model (or unload it with keep_alive 0).
void make_load_job(sched::Job& job) {
  job.kind = (job.keep_alive && job.keep_alive->count() == 0) ? sched::Job::Kind::unload : sched::Job::Kind::load;
}

std::string plain_join(const std::vector<sched::ChatMessage>& msgs) {
  std::string out;
  for (const auto& m : msgs) {
    if (!out.empty()) out += "\n";
    out += m.content;
  }
  return out;
}

http::Reply generate(RouteContext& ctx, const http::Request& req) {
  const auto t0 = Clock::now();
  std::vector<std::string> ignored;
  auto parsed = api::parse_generate_request(req.body, &ignored);
  if (!parsed.ok()) return http::error_response(parsed.error());
  auto g = std::move(*parsed);
  log_ignored(ctx, ignored);
  auto c = common_setup(ctx, req, g.model, g.options, g.keep_alive, g.truncate);
  if (!c.ok()) return http::error_response(c.error());
  auto job = c->job;
  const std::string model_name = g.model;

  if (g.prompt.empty() && g.context.empty() && !g.debug_render_only) {
    make_load_job(*job);
    EventFormat fmt;
    fmt.chunk = [](const std::string&) { return std::string(); };
    fmt.final = [model_name](const std::string&, const sched::DoneInfo& d, const auto&) {
      return dump(Json{{"model", model_name}, {"created_at", now_text()}, {"response", ""}, {"done", true},
                       {"done_reason", d.reason}});
    };
    return submit(ctx, job, std::move(fmt), true);
  }

  std::string system = g.system.empty() ? c->model.system : g.system;
  std::string tmpl = g.template_override.empty() ? c->model.template_override : g.template_override;
  job->render_only = g.debug_render_only;
  job->prepare = [prompt = g.prompt, system, tmpl, raw = g.raw,
                  context = g.context](const sched::LoadedModel& m) -> Result<sched::PreparedPrompt> {
    sched::PreparedPrompt p;
    bool templated = !raw && (m.facts().has_chat_template || !tmpl.empty());
    if (templated) {
      std::vector<sched::ChatMessage> msgs;
      if (!system.empty()) msgs.push_back({"system", system});
      msgs.push_back({"user", prompt});
      NURL_ASSIGN(p.rendered, m.render_chat(msgs, tmpl, true));
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
    fmt.chunk = [](const std::string&) { return std::string(); };
    fmt.final = [model_name](const std::string& text, const sched::DoneInfo&, const auto&) {
      return dump(Json{{"model", model_name},
                       {"created_at", now_text()},
                       {"response", ""},
                       {"done", true},
                       {"debug_info", {{"rendered_template", text}, {"image_count", 0}}}});
    };
    return submit(ctx, job, std::move(fmt), true);
  }
  fmt.chunk = [model_name](const std::string& text) {
    return dump(Json{{"model", model_name}, {"created_at", now_text()}, {"response", text}, {"done", false}});
  };
  fmt.final = [model_name, t0](const std::string& text, const sched::DoneInfo& d, const auto&) {
    Json j{{"model", model_name}, {"created_at", now_text()}, {"response", text}, {"done", true}};
    put_stats(j, d, t0);
    j["context"] = d.context;
    return dump(j);
  };
  return submit(ctx, job, std::move(fmt), !g.stream);
}

http::Reply chat(RouteContext& ctx, const http::Request& req) {
  const auto t0 = Clock::now();
  std::vector<std::string> ignored;
  auto parsed = api::parse_chat_request(req.body, &ignored);
  if (!parsed.ok()) return http::error_response(parsed.error());
  auto q = std::move(*parsed);
  log_ignored(ctx, ignored);
  auto c = common_setup(ctx, req, q.model, q.options, q.keep_alive, q.truncate);
  if (!c.ok()) return http::error_response(c.error());
  auto job = c->job;
  const std::string model_name = q.model;

  if (q.messages.empty() && !q.debug_render_only) {
    make_load_job(*job);
    EventFormat fmt;
    fmt.chunk = [](const std::string&) { return std::string(); };
    fmt.final = [model_name](const std::string&, const sched::DoneInfo& d, const auto&) {
      return dump(Json{{"model", model_name},
                       {"created_at", now_text()},
                       {"message", {{"role", "assistant"}, {"content", ""}}},
                       {"done_reason", d.reason},
                       {"done", true}});
    };
    return submit(ctx, job, std::move(fmt), true);
  }

  std::vector<sched::ChatMessage> msgs;
  bool has_system = false;
  for (const auto& m : q.messages) has_system |= m.role == "system";
  if (!has_system && !c->model.system.empty()) msgs.push_back({"system", c->model.system});
  for (const auto& m : q.messages) msgs.push_back({m.role, m.content});
  job->render_only = q.debug_render_only;
  job->prepare = [msgs, tmpl = c->model.template_override](const sched::LoadedModel& m) -> Result<sched::PreparedPrompt> {
    sched::PreparedPrompt p;
    if (m.facts().has_chat_template || !tmpl.empty()) {
      NURL_ASSIGN(p.rendered, m.render_chat(msgs, tmpl, true));
    } else {
      p.rendered = plain_join(msgs);  // no template in the model: the contents, one per line
    }
    NURL_ASSIGN(p.tokens, m.tokenize(p.rendered, true));
    return p;
  };

  EventFormat fmt;
  if (q.debug_render_only) {
    fmt.chunk = [](const std::string&) { return std::string(); };
    fmt.final = [model_name](const std::string& text, const sched::DoneInfo&, const auto&) {
      return dump(Json{{"model", model_name},
                       {"created_at", now_text()},
                       {"message", {{"role", "assistant"}, {"content", ""}}},
                       {"done", true},
                       {"debug_info", {{"rendered_template", text}, {"image_count", 0}}}});
    };
    return submit(ctx, job, std::move(fmt), true);
  }
  fmt.chunk = [model_name](const std::string& text) {
    return dump(Json{{"model", model_name},
                     {"created_at", now_text()},
                     {"message", {{"role", "assistant"}, {"content", text}}},
                     {"done", false}});
  };
  fmt.final = [model_name, t0](const std::string& text, const sched::DoneInfo& d, const auto&) {
    Json j{{"model", model_name},
           {"created_at", now_text()},
           {"message", {{"role", "assistant"}, {"content", text}}},
           {"done", true}};
    put_stats(j, d, t0);
    return dump(j);
  };
  return submit(ctx, job, std::move(fmt), !q.stream);
}

}  // namespace

void add_generate_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/api/generate", [&ctx](const http::Request& req) { return generate(ctx, req); });
  r.add("POST", "/api/chat", [&ctx](const http::Request& req) { return chat(ctx, req); });
}

}  // namespace nurl
