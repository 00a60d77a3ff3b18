// Model management routes (see models.h). Handlers parse and validate, then either answer from
// the store directly (list, copy, delete: small metadata operations) or hand blocking work
// (hashing, importing, downloading, converting) to a job or a background thread and stream its
// result. /api/create is create.cpp, the blob upload blob-upload.cpp, /api/jobs jobs.cpp.
#include "routes/models.h"

#include <nlohmann/json.hpp>

#include "jobs/job-manager.h"
#include "routes/blob-upload.h"
#include "routes/create.h"
#include "routes/job-stream.h"
#include "routes/peer-access.h"
#include "routes/request-json.h"
#include "store/sha256.h"
#include "store/store.h"

namespace nurl {

namespace {

using namespace routes;

http::Response error_response_code(Code c, const std::string& msg) { return http::error_response(Error(c, msg)); }

Json tags_entry(const Manifest& m) {
  std::string hex = m.digest.size() > 7 ? m.digest.substr(7) : m.digest;
  return Json{{"name", m.name.display()},
              {"model", m.name.display()},
              {"modified_at", m.added_at},
              {"size", m.size},
              {"digest", hex},
              {"details",
               {{"parent_model", ""},
                {"format", m.details.format},
                {"family", m.details.family},
                {"families", m.details.family.empty() ? Json(nullptr) : Json::array({m.details.family})},
                {"parameter_size", m.details.parameter_size},
                {"quantization_level", m.details.quantization_level}}}};
}

http::Reply tags(RouteContext& ctx) {
  if (!ctx.store) return http::error_response(no_store());
  Json models = Json::array();
  for (const auto& m : ctx.store->list()) models.push_back(tags_entry(m));
  return http::json_response(200, dump(Json{{"models", models}}));
}

http::Reply remove(RouteContext& ctx, const http::Request& req) {
  if (!ctx.store) return http::error_response(no_store());
  auto j = body_json(req);
  if (!j.ok()) return http::error_response(j.error());
  auto name = parse_model_name(model_field(*j));
  if (!name.ok()) return http::error_response(name.error());
  if (auto r = ctx.store->remove(*name); !r.ok()) return http::error_response(r.error());
  return http::json_response(200, "{}");
}

http::Reply copy(RouteContext& ctx, const http::Request& req) {
  if (!ctx.store) return http::error_response(no_store());
  auto j = body_json(req);
  if (!j.ok()) return http::error_response(j.error());
  auto from = parse_model_name(str(*j, "source"));
  if (!from.ok()) return http::error_response(from.error().context("source"));
  auto to = parse_model_name(str(*j, "destination"));
  if (!to.ok()) return http::error_response(to.error().context("destination"));
  if (auto r = ctx.store->copy(*from, *to); !r.ok()) return http::error_response(r.error());
  return http::json_response(200, "{}");
}

http::Reply blob_head(RouteContext& ctx, const http::Request& req) {
  if (!ctx.store) return http::error_response(no_store());
  auto d = digest_hex(req.params.at("digest"));
  if (!d.ok()) return http::error_response(d.error());
  std::string digest = "sha256:" + *d;
  return http::json_response(ctx.store->has_blob(digest) ? 200 : 404, "{}");
}

http::Reply pull(RouteContext& ctx, const http::Request& req) {
  if (!ctx.jobs) return http::error_response(no_store());
  auto j = body_json(req);
  if (!j.ok()) return http::error_response(j.error());
  // "model" is the source and "name" the model to create; a lone "name" is the source (old clients).
  PullRequest pr;
  pr.source = str(*j, "model");
  pr.name = str(*j, "name");
  if (pr.source.empty()) std::swap(pr.source, pr.name);
  if (pr.source.empty()) return error_response_code(Code::invalid_argument, "pull needs \"model\"");
  if (is_server_path(pr.source)) {
    if (!req.peer.unix_socket)
      return error_response_code(Code::invalid_argument, "pulling a server path is only accepted over the Unix socket");
    auto p = peer_readable(req.peer, pr.source);
    if (!p.ok()) return http::error_response(p.error());
    pr.source = p->string();
  }
  auto job = ctx.jobs->pull(pr);
  if (!job.ok()) return http::error_response(job.error());
  return job_stream(*job, jf::boolean(*j, "stream", true));
}

http::Reply pull_cancel(RouteContext& ctx, const http::Request& req) {
  if (!ctx.jobs) return http::error_response(no_store());
  auto j = body_json(req);
  if (!j.ok()) return http::error_response(j.error());
  auto plan = plan_pull({model_field(*j), ""});
  if (!plan.ok()) return http::error_response(plan.error());
  for (const auto& s : ctx.jobs->list()) {
    if (s.kind == "pull" && s.source == plan->key && !job_done(s.state)) {
      if (auto r = ctx.jobs->cancel(s.id); !r.ok()) return http::error_response(r.error());
      return http::json_response(200, dump(Json{{"status", "cancelled"}, {"id", s.id}}));
    }
  }
  return error_response_code(Code::not_found, "no running pull of \"" + model_field(*j) + "\"");
}

http::Reply verify(RouteContext& ctx, const http::Request& req) {
  if (!ctx.store) return http::error_response(no_store());
  auto j = body_json(req);
  if (!j.ok()) return http::error_response(j.error());
  auto name = parse_model_name(model_field(*j));
  if (!name.ok()) return http::error_response(name.error());
  Store* store = ctx.store;
  return background_reply(
      [store, n = *name]() -> Result<std::string> {
        NURL_ASSIGN(VerifyReport r, store->verify(n));
        return dump(Json{{"model", r.name},
                         {"ok", r.ok()},
                         {"expected", r.expected_digest},
                         {"actual", r.actual_digest},
                         {"expected_size", r.expected_size},
                         {"size", r.actual_size}});
      },
      "application/json; charset=utf-8");
}

}  // namespace

void add_models_routes(http::Router& r, RouteContext& ctx) {
  RouteContext* c = &ctx;
  r.add("GET", "/api/tags", [c](const http::Request&) { return tags(*c); });
  r.add("DELETE", "/api/delete", [c](const http::Request& q) { return remove(*c, q); });
  r.add("POST", "/api/copy", [c](const http::Request& q) { return copy(*c, q); });
  r.add("POST", "/api/create", [c](const http::Request& q) { return create_model(*c, q); });
  r.add("HEAD", "/api/blobs/:digest", [c](const http::Request& q) { return blob_head(*c, q); });
  r.add("POST", "/api/blobs/:digest", [c](const http::Request& q) -> http::Reply {
    if (!c->store) return http::error_response(no_store());
    return blob_upload(*c->store, q);
  }, http::Access::any, http::Body::streamed);
  r.add("POST", "/api/pull", [c](const http::Request& q) { return pull(*c, q); });
  r.add("DELETE", "/api/pull", [c](const http::Request& q) { return pull_cancel(*c, q); });
  r.add("POST", "/api/verify", [c](const http::Request& q) { return verify(*c, q); });
}

}  // namespace nurl
