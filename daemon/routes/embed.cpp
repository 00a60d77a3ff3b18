#include "routes/embed.h"

#include "api/ollama.h"
#include "routes/event-stream.h"
#include "scheduler/scheduler.h"

namespace nurl {

namespace {

using api::Json;
using Clock = std::chrono::steady_clock;

http::Reply embed(RouteContext& ctx, const http::Request& req, bool legacy) {
  const auto t0 = Clock::now();
  std::vector<std::string> ignored;
  auto parsed = api::parse_embed_request(req.body, legacy, &ignored);
  if (!parsed.ok()) return http::error_response(parsed.error());
  for (const auto& name : ignored) ctx.log.info("request: option \"" + name + "\" is not used; ignoring it");
  auto cfg = ctx.config.get();
  auto m = resolve_model(parsed->model, req.peer, cfg->allow_model_paths, ctx.store_resolve);
  if (!m.ok()) return http::error_response(m.error());
  api::Options opts = m->defaults;
  opts.merge(parsed->options);

  auto job = std::make_shared<sched::Job>();
  job->kind = parsed->input.empty() ? sched::Job::Kind::load : sched::Job::Kind::embed;
  job->model_name = parsed->model;
  job->spec.path = m->path;
  job->spec.n_ctx = opts.num_ctx.value_or(cfg->context_length);
  job->spec.n_parallel = cfg->num_parallel;
  job->keep_alive = parsed->keep_alive;
  job->truncate = parsed->truncate;
  job->embed_inputs = parsed->input;
  job->out = std::make_shared<sched::Channel<sched::Event>>(64);

  EventFormat fmt;
  fmt.final = [legacy, name = parsed->model, dims = parsed->dimensions, t0](const ReplyAggregate& agg,
                                                                           const sched::DoneInfo& d) {
    const auto& embs = agg.embeddings;
    auto cut = [&](std::vector<float> e) {
      if (dims && static_cast<size_t>(*dims) < e.size()) e.resize(static_cast<size_t>(*dims));
      return e;
    };
    Json j;
    if (legacy) {
      j["embedding"] = embs.empty() ? std::vector<float>{} : cut(embs[0]);
    } else {
      Json all = Json::array();
      for (const auto& e : embs) all.push_back(cut(e));
      j = Json{{"model", name},
               {"embeddings", all},
               {"total_duration", std::chrono::duration_cast<Nanos>(Clock::now() - t0).count()},
               {"load_duration", d.load_duration.count()},
               {"prompt_eval_count", d.prompt_eval_count}};
    }
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  auto r = ctx.scheduler->submit(job);
  if (!r.ok()) return http::error_response(r.error());
  return ndjson_stream(job->out, std::move(fmt), true);
}

}  // namespace

void add_embed_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/api/embed", [&ctx](const http::Request& req) { return embed(ctx, req, false); });
  r.add("POST", "/api/embeddings", [&ctx](const http::Request& req) { return embed(ctx, req, true); });
}

}  // namespace nurl
