#include "routes/inference.h"

#include "scheduler/scheduler.h"

namespace nurl {

namespace {
constexpr size_t kChannelCapacity = 256;
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

http::Reply submit_sse(RouteContext& ctx, const std::shared_ptr<sched::Job>& job, EventFormat fmt, Framing framing,
                       bool stream, const ErrorBody& error_body) {
  if (auto r = submit_job(ctx, job); !r.ok()) return error_reply(r.error(), error_body);
  return sse_stream(job->out, std::move(fmt), std::move(framing), !stream, error_body);
}

void log_ignored_options(RouteContext& ctx, const std::vector<std::string>& ignored) {
  for (const auto& name : ignored) ctx.log.info("request: option \"" + name + "\" is not used; ignoring it");
}

Result<Inference> begin_inference(RouteContext& ctx, const http::Request& req, const InferenceParams& p) {
  auto cfg = ctx.config.get();
  NURL_ASSIGN(ModelRef m, resolve_model(p.model, req.peer, cfg->allow_model_paths || p.allow_path, ctx.store_resolve));
  Inference c;
  c.options = m.defaults;
  c.options.merge(p.options);
  c.model = std::move(m);
  auto job = std::make_shared<sched::Job>();
  job->model_name = c.model.name;  // the store's spelling, for /api/ps and logs
  job->user = req.token_name.empty() ? std::string() : "token:" + req.token_name;
  job->spec.path = c.model.path;
  job->spec.n_ctx = c.options.num_ctx.value_or(cfg->context_length);
  job->spec.n_parallel = cfg->num_parallel;
  job->keep_alive = p.keep_alive;
  job->sampling = sampling_from(c.options);
  job->num_predict = c.options.num_predict.value_or(-1);
  if (job->num_predict < 0) job->num_predict = -1;
  job->stop = c.options.stop.value_or(std::vector<std::string>{});
  job->truncate = p.truncate;
  job->out = std::make_shared<sched::Channel<sched::Event>>(kChannelCapacity);
  c.job = std::move(job);
  return c;
}

void put_done_stats(api::Json& j, const sched::DoneInfo& d, std::chrono::steady_clock::time_point t0) {
  j["done_reason"] = d.reason;
  j["total_duration"] = std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now() - t0).count();
  j["load_duration"] = d.load_duration.count();
  j["prompt_eval_count"] = d.prompt_eval_count;
  j["prompt_eval_duration"] = d.prompt_eval_duration.count();
  j["eval_count"] = d.eval_count;
  j["eval_duration"] = d.eval_duration.count();
  // Added field (not in ollama): how many prompt tokens were dropped to fit num_ctx.
  if (d.truncated_tokens > 0) j["truncated_prompt_tokens"] = d.truncated_tokens;
}

void make_load_job(sched::Job& job) {
  job.kind = (job.keep_alive && job.keep_alive->count() == 0) ? sched::Job::Kind::unload : sched::Job::Kind::load;
}

Result<void> submit_job(RouteContext& ctx, const std::shared_ptr<sched::Job>& job) {
  if (!ctx.scheduler) return Error(Code::internal, "no scheduler");
  return ctx.scheduler->submit(job);
}

std::vector<sched::ChatMessage> chat_messages(const std::vector<api::ChatTurn>& turns) {
  std::vector<sched::ChatMessage> out;
  out.reserve(turns.size());
  for (const auto& t : turns) {
    sched::ChatMessage m(t.role, t.content);
    m.thinking = t.thinking;
    for (size_t i = 0; i < t.tool_calls.size(); ++i) {
      const auto& c = t.tool_calls[i];
      m.tool_calls.push_back(sched::ToolCall{c.id, c.name, c.arguments, static_cast<int>(i)});
    }
    m.tool_name = t.tool_name;
    m.tool_call_id = t.tool_call_id;
    out.push_back(std::move(m));
  }
  return out;
}

std::function<Result<sched::PreparedPrompt>(const sched::LoadedModel&)> chat_prepare(
    std::vector<sched::ChatMessage> messages, const ModelRef& model, const sched::Job& job) {
  bool has_system = false;
  for (const auto& m : messages) has_system |= m.role == "system";
  if (!has_system && !model.system.empty()) messages.insert(messages.begin(), sched::ChatMessage("system", model.system));
  sched::ChatRender render;
  render.template_override = model.template_override;
  render.tools = job.tools;
  render.think = job.think;
  return [msgs = std::move(messages), render](const sched::LoadedModel& m) -> Result<sched::PreparedPrompt> {
    sched::PreparedPrompt p;
    if (m.facts().has_chat_template || !render.template_override.empty()) {
      NURL_ASSIGN(p.rendered, m.render_chat(msgs, render));
      p.template_override = render.template_override;
    } else {
      // No template in the model: the contents, one per line.
      for (const auto& msg : msgs) {
        if (!p.rendered.empty()) p.rendered += "\n";
        p.rendered += msg.content;
      }
    }
    NURL_ASSIGN(p.tokens, m.tokenize(p.rendered, true));
    return p;
  };
}

void apply_structured(sched::Job& job, const api::StructuredFields& s) {
  job.format = s.format;
  job.tools = s.tools;
  job.tool_choice = s.tool_choice;
  job.parallel_tool_calls = s.parallel_tool_calls;
  if (!s.think.empty()) job.think = s.think;
  job.think_budget = s.think_budget;
  job.top_logprobs = s.top_logprobs;
}

}  // namespace nurl
