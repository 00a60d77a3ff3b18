// Model management routes (see models.h). Handlers parse and validate, then either answer from
// the store directly (list, copy, delete: small metadata operations) or hand blocking work
// (hashing, importing, downloading) to a job or a background thread and stream its result.
#include "routes/models.h"

#include <nlohmann/json.hpp>

#include "jobs/job-manager.h"
#include "routes/job-stream.h"
#include "store/fs-util.h"
#include "store/sha256.h"
#include "store/store.h"

namespace nurl {

namespace {

using Json = nlohmann::json;

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Result<Json> body_json(const http::Request& req) {
  auto j = Json::parse(req.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error(Code::invalid_argument, "request body must be a JSON object");
  return j;
}

std::string str(const Json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// ollama accepts "model" and the older "name".
std::string model_field(const Json& j) {
  std::string m = str(j, "model");
  return m.empty() ? str(j, "name") : m;
}

bool looks_like_path(const std::string& s) {
  return s.rfind("/", 0) == 0 || s.rfind("./", 0) == 0 || s.rfind("../", 0) == 0 || s.rfind("~/", 0) == 0;
}

http::Response error_response_code(Code c, const std::string& msg) { return http::error_response(Error(c, msg)); }

Error no_store() { return Error(Code::busy, "the model store is not available (see the daemon log)"); }

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

// Final lines of a create, as ollama streams them.
std::string create_lines(const Manifest& m, bool stream) {
  if (!stream) return dump(Json{{"status", "success"}});
  return dump(Json{{"status", "using existing layer " + m.digest}}) + "\n" +
         dump(Json{{"status", "writing manifest"}}) + "\n" + dump(Json{{"status", "success"}}) + "\n";
}

http::Reply create(RouteContext& ctx, const http::Request& req) {
  if (!ctx.store) return http::error_response(no_store());
  auto j = body_json(req);
  if (!j.ok()) return http::error_response(j.error());
  auto name = parse_model_name(model_field(*j));
  if (!name.ok()) return http::error_response(name.error());
  bool stream = j->value("stream", true);
  CreateOptions opt;
  opt.system = str(*j, "system");
  opt.template_text = str(*j, "template");
  if (auto p = j->find("parameters"); p != j->end() && p->is_object()) opt.parameters = *p;
  Store* store = ctx.store;
  std::string ctype = stream ? "application/x-ndjson" : "application/json; charset=utf-8";

  // files: {"model.gguf": "sha256:…"} uploaded beforehand through /api/blobs.
  if (auto files = j->find("files"); files != j->end() && files->is_object() && !files->empty()) {
    std::string digest;
    for (auto& [fname, d] : files->items())
      if (d.is_string() && (digest.empty() || fname.ends_with(".gguf"))) digest = d.get<std::string>();
    if (!digest_hex(digest).ok()) return error_response_code(Code::invalid_argument, "files: invalid digest");
    opt.source = "upload";
    return background_reply(
        [store, n = *name, digest, opt, stream]() mutable -> Result<std::string> {
          NURL_ASSIGN(Manifest m, store->create_from_blob(n, digest, std::move(opt)));
          return create_lines(m, stream);
        },
        ctype);
  }
  std::string from = str(*j, "from");
  if (from.empty()) return error_response_code(Code::invalid_argument, "create needs \"files\" or \"from\"");
  if (looks_like_path(from)) {
    if (!req.peer.unix_socket)
      return error_response_code(Code::invalid_argument,
                                  "FROM a server path is only accepted over the Unix socket; upload the file with "
                                  "/api/blobs/:digest and pass \"files\"");
    return background_reply(
        [store, n = *name, from, opt, stream]() mutable -> Result<std::string> {
          NURL_ASSIGN(Manifest m, store->create(n, from, std::move(opt)));
          return create_lines(m, stream);
        },
        ctype);
  }
  // FROM an existing model: same blob, its settings unless overridden.
  auto base_name = parse_model_name(from);
  if (!base_name.ok()) return http::error_response(base_name.error().context("from"));
  auto base = store->read_manifest(*base_name);
  if (!base.ok()) return http::error_response(base.error());
  if (opt.system.empty()) opt.system = base->system;
  if (opt.template_text.empty()) opt.template_text = base->template_text;
  Json params = base->parameters;
  params.update(opt.parameters);
  opt.parameters = params;
  opt.source = base->source;
  return background_reply(
      [store, n = *name, digest = base->digest, opt, stream]() mutable -> Result<std::string> {
        NURL_ASSIGN(Manifest m, store->create_from_blob(n, digest, std::move(opt)));
        return create_lines(m, stream);
      },
      ctype);
}

http::Reply blob_head(RouteContext& ctx, const http::Request& req) {
  if (!ctx.store) return http::error_response(no_store());
  auto d = digest_hex(req.params.at("digest"));
  if (!d.ok()) return http::error_response(d.error());
  std::string digest = "sha256:" + *d;
  return http::json_response(ctx.store->has_blob(digest) ? 200 : 404, "{}");
}

http::Reply blob_upload(RouteContext& ctx, const http::Request& req) {
  if (!ctx.store) return http::error_response(no_store());
  auto d = digest_hex(req.params.at("digest"));
  if (!d.ok()) return http::error_response(d.error());
  std::string digest = "sha256:" + *d;
  if (ctx.store->has_blob(digest)) return http::json_response(200, "{}");
  Store* store = ctx.store;
  auto s = background_reply(
      [store, digest, body = req.body]() -> Result<std::string> {
        Sha256 h;
        h.update(body);
        std::string got = h.finish();
        if (got != digest)
          return Error(Code::invalid_argument, "digest mismatch: the body hashes to " + got + ", not " + digest);
        auto tmp = temp_path_in(store->layout().blobs());
        NURL_TRY(write_file_atomic(tmp, body));  // durable temp, then the content address
        if (auto r = store->commit_blob(tmp, digest); !r.ok()) {
          std::filesystem::remove(tmp);
          return r.error();
        }
        return std::string("{}");
      },
      "application/json; charset=utf-8");
  s.status = 201;
  return s;
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
  if (looks_like_path(pr.source) && !req.peer.unix_socket)
    return error_response_code(Code::invalid_argument,
                                "pulling a server path is only accepted over the Unix socket");
  auto job = ctx.jobs->pull(pr);
  if (!job.ok()) return http::error_response(job.error());
  return job_stream(*job, j->value("stream", true));
}

http::Reply pull_cancel(RouteContext& ctx, const http::Request& req) {
  if (!ctx.jobs) return http::error_response(no_store());
  auto j = body_json(req);
  if (!j.ok()) return http::error_response(j.error());
  auto plan = plan_pull({model_field(*j), ""});
  if (!plan.ok()) return http::error_response(plan.error());
  for (const auto& s : ctx.jobs->list()) {
    if (s.source == plan->key && !job_done(s.state)) {
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
  r.add("POST", "/api/create", [c](const http::Request& q) { return create(*c, q); });
  r.add("HEAD", "/api/blobs/:digest", [c](const http::Request& q) { return blob_head(*c, q); });
  r.add("POST", "/api/blobs/:digest", [c](const http::Request& q) { return blob_upload(*c, q); });
  r.add("POST", "/api/pull", [c](const http::Request& q) { return pull(*c, q); });
  r.add("DELETE", "/api/pull", [c](const http::Request& q) { return pull_cancel(*c, q); });
  r.add("POST", "/api/verify", [c](const http::Request& q) { return verify(*c, q); });
  r.add("GET", "/api/jobs", [c](const http::Request&) {
    Json jobs = Json::array();
    if (c->jobs)
      for (const auto& s : c->jobs->list()) jobs.push_back(s.to_json());
    return http::Reply(http::json_response(200, dump(Json{{"jobs", jobs}})));
  }, http::Access::control);
  r.add("DELETE", "/api/jobs/:id", [c](const http::Request& q) {
    if (!c->jobs) return http::Reply(http::error_response(no_store()));
    if (auto res = c->jobs->cancel(q.params.at("id")); !res.ok()) return http::Reply(http::error_response(res.error()));
    return http::Reply(http::json_response(200, R"({"status":"cancelled"})"));
  }, http::Access::control);
}

}  // namespace nurl
