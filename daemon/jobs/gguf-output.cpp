// run_gguf_job (see gguf-output.h).
#include "jobs/gguf-output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <chrono>

#include "api/json-fields.h"
#include "store/fs-util.h"
#include "store/sha256.h"

namespace nurl {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Result<OutputTarget> OutputTarget::from_request(const nlohmann::json& request) {
  OutputTarget t;
  t.model = jf::str(request, "name");
  std::string file = jf::str(request, "output");
  if (t.model.empty() == file.empty())
    return Error(Code::invalid_argument, "a job needs exactly one of \"name\" (a model) and \"output\" (a file)");
  if (!t.model.empty()) {
    NURL_ASSIGN(ModelName n, parse_model_name(t.model));
    t.model = n.display();
  } else {
    t.file = fs::path(file);
    if (!t.file.is_absolute() || !t.file.has_filename())
      return Error(Code::invalid_argument, "output \"" + file + "\" must be an absolute file path");
    t.file = t.file.lexically_normal();
  }
  t.create.system = jf::str(request, "system");
  t.create.template_text = jf::str(request, "template");
  if (auto p = request.find("parameters"); p != request.end() && p->is_object()) t.create.parameters = *p;
  t.create.source = jf::str(request, "source");
  return t;
}

void OutputTarget::to_request(nlohmann::json& request) const {
  if (!model.empty()) request["name"] = model;
  else request["output"] = file.string();
  if (!create.system.empty()) request["system"] = create.system;
  if (!create.template_text.empty()) request["template"] = create.template_text;
  if (!create.parameters.empty()) request["parameters"] = create.parameters;
}

namespace {

// Where the producer writes: the file itself, or a job-private name in the blobs directory (the
// same file system as the blobs, so the import is a rename).
fs::path output_path(const JobContext& ctx, const OutputTarget& t) {
  if (!t.file.empty()) return t.file;
  return ctx.store.layout().blobs() / ("job-" + ctx.job.id() + ".gguf");
}

fs::path partial_of(const fs::path& out) { return fs::path(out.string() + ".partial"); }

void remove_outputs(const JobContext& ctx, const OutputTarget& t) {
  fs::path out = output_path(ctx, t);
  ::unlink(partial_of(out).c_str());
  if (t.file.empty()) ::unlink(out.c_str());  // never a user's file: only our own blob-side name
}

Result<void> fsync_path(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "opening", p);
  auto r = fsync_fd(fd, p);
  ::close(fd);
  return r;
}

// The output is complete: check it is a GGUF whose metadata reads, then import it or leave it.
Result<void> finish_output(JobContext& ctx, const OutputTarget& t, const fs::path& out) {
  NURL_TRY(check_gguf_header(out));
  auto details = read_model_details(out);
  if (!details.ok()) return details.error().context("checking the output " + out.string());
  NURL_TRY(fsync_path(out));
  if (!t.file.empty()) return fsync_dir(out.parent_path());
  ctx.job.emit({"verifying sha256 digest", "", 0, 0, "verifying"});
  NURL_ASSIGN(HashedFile h, hash_file(out, [&](uint64_t) { return !ctx.job.stop_requested(); }));
  NURL_ASSIGN(ModelName name, parse_model_name(t.model));
  BlobPin pin = ctx.store.pin(h.digest);
  if (ctx.store.has_blob(h.digest)) {
    ctx.job.emit({"using existing layer " + h.digest, h.digest, 0, 0, "importing"});
    ::unlink(out.c_str());
  } else {
    NURL_TRY(ctx.store.commit_blob(out, h.digest));
  }
  ctx.job.emit({"writing manifest", "", 0, 0, "importing"});
  auto m = ctx.store.create_from_blob(name, h.digest, t.create);
  if (!m.ok()) {
    pin = BlobPin();
    ctx.store.release_blob(h.digest);
    return m.error();
  }
  return ok();
}

}  // namespace

void discard_gguf_output(JobContext& ctx, const OutputTarget& target) { remove_outputs(ctx, target); }

Result<std::string> match_type(const std::string& requested, const std::vector<std::string>& types,
                               const std::string& what) {
  auto lower = [](std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string want = lower(requested);
  std::string all;
  for (const auto& t : types) {
    if (lower(t) == want) return t;
    all += (all.empty() ? "" : ", ") + t;
  }
  return Error(Code::invalid_argument, "unknown " + what + " \"" + requested + "\" (one of " + all + ")");
}

void GgufJobKind::discard(JobContext& ctx) const {
  if (auto t = OutputTarget::from_request(ctx.request); t.ok()) discard_gguf_output(ctx, *t);
}

Result<JobPlan> GgufJobKind::finish_plan(const nlohmann::json& request, nlohmann::json r, const std::string& key_source,
                                         const std::string& type) {
  r["type"] = type;
  NURL_ASSIGN(OutputTarget t, OutputTarget::from_request(request));
  t.to_request(r);
  if (int th = jf::int_in(request, "threads", 0, 4096, 0); th > 0) r["threads"] = th;
  return JobPlan{key_source + " -> " + type + " -> " + t.describe(), t.describe(), r};
}

void run_gguf_job(JobContext& ctx, const std::string& title, const OutputTarget& target, const Producer& produce) {
  Job& job = ctx.job;
  job.set_state(JobState::running);
  ctx.persist();
  const fs::path out = output_path(ctx, target);
  ctx.log.info(job.kind() + " " + job.id() + ": " + job.source() + " -> " + target.describe() + " (" +
               std::to_string(ctx.threads) + " threads)");

  std::string stage;
  auto last_report = Clock::now() - std::chrono::seconds(1);
  ProducerCall call;
  call.out = out;
  call.threads = ctx.threads;
  call.on_progress = [&](const ProducerProgress& p) {
    if (p.stage != stage) {
      stage = p.stage;
      job.emit({title, "", p.total, p.done, p.stage});
      last_report = Clock::now();
    } else if (Clock::now() - last_report > std::chrono::milliseconds(100) || p.done == p.total) {
      job.progress(p.done, p.total);
      last_report = Clock::now();
    }
    return !job.stop_requested();
  };
  call.on_checkpoint = [&](const nlohmann::json& point) { ctx.save({{"resume", point}}); };

  // Killed between the producer's end and the import: the output is complete, import it.
  const bool produced = ctx.saved.is_object() && jf::boolean(ctx.saved, "produced", false) && check_gguf_header(out).ok();
  const bool resuming = !produced && ctx.saved.is_object() && ctx.saved.contains("resume");
  Result<void> r;
  if (!produced) {
    if (resuming) {
      call.resume = ctx.saved["resume"];
      ctx.log.info(job.kind() + " " + job.id() + ": resuming after tensor " +
                   std::to_string(jf::int_in(call.resume, "tensors_done", 0, 1 << 30, 0)));
    }
    r = produce(call);
    if (!r.ok() && resuming && !job.stop_requested()) {
      // The resume point did not fit the partial file (or the engine refused it): start over.
      ctx.log.warn(job.kind() + " " + job.id() + ": resuming failed (" + r.error().msg + "); starting over");
      ::unlink(partial_of(out).c_str());
      ctx.save(nlohmann::json::object());
      call.resume = nullptr;
      stage.clear();
      r = produce(call);
    }
  }
  if (job.stop_requested()) {
    if (!job.discard_requested()) return;  // daemon shutdown: the partial file and resume point stay
    remove_outputs(ctx, target);
    return cancel_job(ctx);
  }
  if (!r.ok()) {
    remove_outputs(ctx, target);
    return fail_job(ctx, r.error().msg);
  }
  if (!produced) ctx.save({{"produced", true}});
  if (auto f = finish_output(ctx, target, out); !f.ok()) {
    if (job.stop_requested() && !job.discard_requested()) return;  // shutdown: import after the restart
    remove_outputs(ctx, target);
    if (job.stop_requested()) return cancel_job(ctx);
    return fail_job(ctx, f.error().msg);
  }
  succeed_job(ctx);
}

}  // namespace nurl
