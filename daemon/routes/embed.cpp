#include "routes/embed.h"

#include <cmath>

#include "api/ollama.h"
#include "routes/event-stream.h"
#include "routes/inference.h"

namespace nurl {

namespace {

using api::Json;
using Clock = std::chrono::steady_clock;

http::Reply embed(RouteContext& ctx, const http::Request& req, bool legacy) {
  const auto t0 = Clock::now();
  std::vector<std::string> ignored;
  auto parsed = api::parse_embed_request(req.body, legacy, &ignored);
  if (!parsed.ok()) return http::error_response(parsed.error());
  log_ignored_options(ctx, ignored);
  auto c = begin_inference(ctx, req, {parsed->model, parsed->options, parsed->keep_alive, parsed->truncate});
  if (!c.ok()) return http::error_response(c.error());
  auto job = c->job;
  job->kind = parsed->input.empty() ? sched::Job::Kind::load : sched::Job::Kind::embed;
  job->embed_inputs = parsed->input;

  EventFormat fmt;
  fmt.final = [legacy, name = parsed->model, dims = parsed->dimensions, t0](const ReplyAggregate& agg,
                                                                           const sched::DoneInfo& d) {
    const auto& embs = agg.embeddings;
    auto cut = [&](std::vector<float> e) { return resize_embedding(std::move(e), dims); };
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
    return api::dump(j);
  };
  if (auto r = submit_job(ctx, job); !r.ok()) return http::error_response(r.error());
  return ndjson_stream(job->out, std::move(fmt), true);
}

}  // namespace

std::vector<float> resize_embedding(std::vector<float> e, std::optional<int> dimensions) {
  if (!dimensions || static_cast<size_t>(*dimensions) >= e.size()) return e;
  e.resize(static_cast<size_t>(*dimensions));
  double sum = 0;
  for (float x : e) sum += static_cast<double>(x) * x;
  if (sum > 0) {
    const float scale = static_cast<float>(1.0 / std::sqrt(sum));
    for (float& x : e) x *= scale;
  }
  return e;
}

void add_embed_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/api/embed", [&ctx](const http::Request& req) { return embed(ctx, req, false); });
  r.add("POST", "/api/embeddings", [&ctx](const http::Request& req) { return embed(ctx, req, true); });
}

}  // namespace nurl
