// Job routes (see jobs.h).
#include "routes/jobs.h"

#include "jobs/job-manager.h"
#include "routes/job-stream.h"
#include "routes/peer-access.h"
#include "routes/request-json.h"
#include "store/store.h"

namespace nurl {

namespace {

using namespace routes;

// "stream=true" (or follow=true, 1) in a query string.
bool query_flag(const std::string& query, const std::string& key) {
  size_t i = 0;
  while (i <= query.size()) {
    size_t amp = query.find('&', i);
    std::string kv = query.substr(i, amp == std::string::npos ? std::string::npos : amp - i);
    if (kv == key + "=true" || kv == key + "=1" || kv == key) return true;
    if (amp == std::string::npos) break;
    i = amp + 1;
  }
  return false;
}

// Replaces the request's paths by what the peer may use, or refuses.
Result<void> check_paths(const http::Peer& peer, Json& request) {
  if (std::string s = str(request, "source"); !s.empty() && is_server_path(s)) {
    NURL_ASSIGN(auto p, peer_readable(peer, s));
    request["source"] = p.string();
  }
  if (std::string o = str(request, "output"); !o.empty()) {
    NURL_ASSIGN(auto p, peer_writable(peer, o));
    request["output"] = p.string();
  }
  return ok();
}

http::Reply start(RouteContext& ctx, const http::Request& req) {
  auto j = body_json(req);
  if (!j.ok()) return http::error_response(j.error());
  std::string kind = str(*j, "kind");
  if (kind.empty()) return http::error_response(Error(Code::invalid_argument, "a job needs \"kind\""));
  if (auto r = check_paths(req.peer, *j); !r.ok()) return http::error_response(r.error());
  if (std::string model = str(*j, "model"); kind == "quantize" && !model.empty()) {
    // A model in the store: its blob (pinned by the job while it runs).
    if (!ctx.store) return http::error_response(no_store());
    auto name = parse_model_name(model);
    if (!name.ok()) return http::error_response(name.error());
    auto m = ctx.store->read_manifest(*name);
    if (!m.ok()) return http::error_response(m.error());
    (*j)["blob"] = m->digest;
    j->erase("model");
  }
  auto job = ctx.jobs->submit(kind, *j);
  if (!job.ok()) return http::error_response(job.error());
  return job_stream(*job, jf::boolean(*j, "stream", true), /*with_id=*/true);
}

http::Reply show(RouteContext& ctx, const http::Request& req) {
  const std::string& id = req.params.at("id");
  if (query_flag(req.query, "stream") || query_flag(req.query, "follow")) {
    auto job = ctx.jobs->find(id);
    if (!job) return http::error_response(Error(Code::not_found, "no job " + id));
    return job_stream(job, true, /*with_id=*/true);
  }
  auto d = ctx.jobs->describe(id);
  if (!d.ok()) return http::error_response(d.error());
  return http::json_response(200, dump(*d));
}

}  // namespace

void add_jobs_routes(http::Router& r, RouteContext& ctx) {
  RouteContext* c = &ctx;
  auto guarded = [c](auto f) {
    return [c, f](const http::Request& q) -> http::Reply {
      if (!c->jobs) return http::error_response(no_store());
      return f(*c, q);
    };
  };
  r.add("GET", "/api/jobs", guarded([](RouteContext& x, const http::Request&) -> http::Reply {
          Json jobs = Json::array();
          for (const auto& s : x.jobs->list()) jobs.push_back(s.to_json());
          return http::json_response(200, dump(Json{{"jobs", jobs}}));
        }),
        http::Access::control);
  r.add("POST", "/api/jobs", guarded(start), http::Access::control);
  r.add("GET", "/api/jobs/:id", guarded(show), http::Access::control);
  r.add("DELETE", "/api/jobs/:id", guarded([](RouteContext& x, const http::Request& q) -> http::Reply {
          if (auto res = x.jobs->cancel(q.params.at("id")); !res.ok()) return http::error_response(res.error());
          return http::json_response(200, R"({"status":"cancelled"})");
        }),
        http::Access::control);
}

}  // namespace nurl
