// create_model (see create.h).
#include "routes/create.h"

#include "jobs/job-manager.h"
#include "routes/job-stream.h"
#include "routes/peer-access.h"
#include "routes/request-json.h"
#include "store/sha256.h"
#include "store/store.h"

namespace nurl {

namespace {

using namespace routes;

// Final lines of a create that needed no job, as ollama streams them.
std::string create_lines(const Manifest& m, bool stream) {
  if (!stream) return dump(Json{{"status", "success"}});
  return dump(Json{{"status", "using existing layer " + m.digest}}) + "\n" +
         dump(Json{{"status", "writing manifest"}}) + "\n" + dump(Json{{"status", "success"}}) + "\n";
}

http::Reply in_background(Store* store, ModelName name, CreateOptions opt, std::string digest, std::string path,
                          bool stream) {
  return background_reply(
      [store, name, opt, digest, path, stream]() mutable -> Result<std::string> {
        Result<Manifest> m = path.empty() ? store->create_from_blob(name, digest, std::move(opt))
                                          : store->create(name, path, std::move(opt));
        if (!m.ok()) return m.error();
        return create_lines(*m, stream);
      },
      stream ? "application/x-ndjson" : "application/json; charset=utf-8");
}

http::Reply submit(RouteContext& ctx, const std::string& kind, const Json& request, bool stream) {
  if (!ctx.jobs) return http::error_response(no_store());
  auto job = ctx.jobs->submit(kind, request);
  if (!job.ok()) return http::error_response(job.error());
  return job_stream(*job, stream);
}

}  // namespace

http::Reply create_model(RouteContext& ctx, const http::Request& req) {
  if (!ctx.store) return http::error_response(no_store());
  auto j = body_json(req);
  if (!j.ok()) return http::error_response(j.error());
  auto name = parse_model_name(model_field(*j));
  if (!name.ok()) return http::error_response(name.error());
  const bool stream = jf::boolean(*j, "stream", true);
  const std::string quantize = str(*j, "quantize");
  CreateOptions opt;
  opt.system = str(*j, "system");
  opt.template_text = str(*j, "template");
  if (auto p = j->find("parameters"); p != j->end() && p->is_object()) opt.parameters = *p;
  // What a job needs to write the manifest.
  Json job = {{"name", name->display()}};
  auto settings = [&](const CreateOptions& o) {
    if (!o.system.empty()) job["system"] = o.system;
    if (!o.template_text.empty()) job["template"] = o.template_text;
    if (!o.parameters.empty()) job["parameters"] = o.parameters;
  };
  settings(opt);
  Store* store = ctx.store;

  if (auto files = j->find("files"); files != j->end() && files->is_object() && !files->empty()) {
    std::string gguf;
    bool checkpoint = false;
    for (auto& [fname, d] : files->items()) {
      if (!d.is_string() || !digest_hex(d.get<std::string>()).ok())
        return http::error_response(Error(Code::invalid_argument, "files: invalid digest for " + fname));
      if (!store->has_blob(d.get<std::string>()))
        return http::error_response(
            Error(Code::invalid_argument, "files: " + fname + ": blob " + d.get<std::string>() +
                                              " not found (upload it with POST /api/blobs/:digest first)"));
      if (fname.ends_with(".safetensors")) checkpoint = true;
      if (fname.ends_with(".gguf") || (gguf.empty() && files->size() == 1)) gguf = d.get<std::string>();
    }
    if (checkpoint) {
      job["files"] = *files;
      job["type"] = quantize.empty() ? "f16" : quantize;
      return submit(ctx, "convert", job, stream);
    }
    if (gguf.empty())
      return http::error_response(Error(Code::invalid_argument, "files: no .gguf file and no .safetensors checkpoint"));
    if (!quantize.empty()) {
      job["blob"] = gguf;
      job["type"] = quantize;
      return submit(ctx, "quantize", job, stream);
    }
    opt.source = "upload";
    return in_background(store, *name, opt, gguf, "", stream);
  }

  std::string from = str(*j, "from");
  if (from.empty()) return http::error_response(Error(Code::invalid_argument, "create needs \"files\" or \"from\""));
  if (is_server_path(from)) {
    if (!req.peer.unix_socket)
      return http::error_response(Error(Code::invalid_argument,
                                        "FROM a server path is only accepted over the Unix socket; upload the files "
                                        "with /api/blobs/:digest and pass \"files\""));
    auto path = peer_readable(req.peer, from);
    if (!path.ok()) return http::error_response(path.error());
    std::error_code ec;
    if (std::filesystem::is_directory(*path, ec)) {
      job["source"] = path->string();
      job["type"] = quantize.empty() ? "f16" : quantize;
      return submit(ctx, "convert", job, stream);
    }
    if (!quantize.empty()) {
      job["source"] = path->string();
      job["type"] = quantize;
      return submit(ctx, "quantize", job, stream);
    }
    return in_background(store, *name, opt, "", path->string(), stream);
  }

  // FROM an existing model: its blob, its settings unless overridden.
  auto base_name = parse_model_name(from);
  if (!base_name.ok()) return http::error_response(base_name.error().context("from"));
  auto base = store->read_manifest(*base_name);
  if (!base.ok()) return http::error_response(base.error());
  if (opt.system.empty()) opt.system = base->system;
  if (opt.template_text.empty()) opt.template_text = base->template_text;
  Json params = base->parameters;
  params.update(opt.parameters);
  opt.parameters = params;
  if (!quantize.empty()) {
    settings(opt);
    job["blob"] = base->digest;
    job["type"] = quantize;
    return submit(ctx, "quantize", job, stream);
  }
  opt.source = base->source;
  return in_background(store, *name, opt, base->digest, "", stream);
}

}  // namespace nurl
