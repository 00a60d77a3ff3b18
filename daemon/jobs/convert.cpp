// The convert kind (see convert.h).
#include "jobs/convert.h"

#include <unistd.h>

#include <algorithm>

#include "api/json-fields.h"
#include "api/model-name.h"
#include "jobs/engine-progress.h"
#include "jobs/gguf-output.h"
#include "store/fs-util.h"
#include "store/sha256.h"
#include "store/store.h"

namespace nurl {

namespace fs = std::filesystem;

namespace {

// Links the uploaded blobs into <work>/checkpoint under their file names.
Result<fs::path> materialize(JobContext& ctx, const nlohmann::json& files) {
  fs::path dir = ctx.work_dir / "checkpoint";
  std::error_code ec;
  fs::remove_all(dir, ec);
  NURL_TRY(make_dirs(dir));
  for (auto& [name, digest] : files.items()) {
    std::string d = digest.get<std::string>();
    if (!ctx.store.has_blob(d)) return Error(Code::not_found, name + ": blob " + d + " is not in the store (upload it first)");
    fs::path blob = ctx.store.blob_path(d), link = dir / name;
    if (::link(blob.c_str(), link.c_str()) != 0 && ::symlink(blob.c_str(), link.c_str()) != 0)
      return errno_error(errno, "linking " + name + " to", blob);
  }
  return dir;
}

class ConvertKind : public GgufJobKind {
 public:
  std::string name() const override { return "convert"; }

  Result<JobPlan> plan(const nlohmann::json& request) const override {
    nlohmann::json r = nlohmann::json::object();
    std::string source = jf::str(request, "source");
    std::string key_source;
    if (auto f = request.find("files"); f != request.end() && f->is_object() && !f->empty()) {
      if (!source.empty()) return Error(Code::invalid_argument, "convert takes \"source\" or \"files\", not both");
      std::string all;
      for (auto& [n, d] : f->items()) {
        if (!valid_name_segment(n, 255)) return Error(Code::invalid_argument, "files: invalid file name \"" + n + "\"");
        if (!d.is_string() || !digest_hex(d.get<std::string>()).ok())
          return Error(Code::invalid_argument, "files: invalid digest for " + n);
        all += n + "=" + d.get<std::string>() + ";";
      }
      r["files"] = *f;
      Sha256 h;
      h.update(all);
      key_source = "files:" + h.finish().substr(7, 16);
    } else {
      fs::path p(source);
      if (source.empty() || !p.is_absolute())
        return Error(Code::invalid_argument, "convert needs \"source\" (an absolute checkpoint directory) or \"files\"");
      r["source"] = key_source = p.lexically_normal().string();
    }
    NURL_ASSIGN(std::string type, match_type(jf::str(request, "type", "q8_0"), convert::convert_types(), "output type"));
    return finish_plan(request, std::move(r), key_source, type);
  }

  void run(JobContext& ctx) const override {
    auto target = OutputTarget::from_request(ctx.request);
    if (!target.ok()) return fail_job(ctx, target.error().msg);
    fs::path dir = jf::str(ctx.request, "source");
    if (ctx.request.contains("files")) {
      ctx.job.emit({"linking uploaded files", "", 0, 0, "reading checkpoint"});
      auto d = materialize(ctx, ctx.request["files"]);
      if (!d.ok()) return fail_job(ctx, d.error().msg);
      dir = *d;
      target->create.source = "upload";
    } else {
      target->create.source = dir.string();
    }
    const std::string type = jf::str(ctx.request, "type", "q8_0");
    run_gguf_job(ctx, "converting model to " + type, *target, [&](const ProducerCall& call) -> Result<void> {
      convert::ConvertOptions o;
      o.out_type = type;
      apply_call(o, call);
      return convert::convert_checkpoint(dir, call.out, o);
    });
  }

};

}  // namespace

std::unique_ptr<JobKind> make_convert_kind() { return std::make_unique<ConvertKind>(); }

}  // namespace nurl
