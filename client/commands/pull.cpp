// `pull SRC [--name N] [--cancel]`: starts (or attaches to) the daemon's pull job and shows its
// progress. Leaving (Ctrl+C) does not stop the download: the job runs on in the daemon; --cancel does.
// stream_progress() is the shared progress loop of every command that follows a job.
#include <unistd.h>

#include "client/context.h"
#include "client/progress.h"
#include "core/json-text.h"

namespace nurl::client {

bool stream_progress(Context& ctx, const std::string& method, const std::string& path, const nlohmann::json& body) {
  ProgressPrinter progress(stderr, ctx.stderr_tty);
  std::string err, job;
  bool success = false;
  auto r = ctx.http->stream(method, path, body, [&](const nlohmann::json& ev) {
    if (ev.contains("error")) {
      err = ev["error"].is_string() ? ev["error"].get<std::string>() : dump_json(ev["error"]);
      return false;
    }
    if (job.empty() && ev.contains("job")) {
      job = ev.value("job", "");
      std::fprintf(stderr, "job %s (Ctrl+C leaves it running; `nurllama jobs --follow %s` follows it again)\n",
                   job.c_str(), job.c_str());
    }
    progress.on_event(ev);
    if (ev.value("status", "") == "success") success = true;
    return true;
  });
  progress.finish();
  if (!err.empty()) {
    ctx.fail(err);
    return false;
  }
  if (!r.ok()) {
    ctx.fail(r.error());
    return false;
  }
  if (!success) {
    ctx.fail("the job ended without success");
    return false;
  }
  return true;
}

bool pull_with_progress(Context& ctx, const std::string& source, const std::string& name) {
  nlohmann::json body{{"model", Context::model_ref(source)}, {"stream", true}};
  if (!name.empty()) body["name"] = name;
  return stream_progress(ctx, "POST", "/api/pull", body);
}

void add_pull_command(CLI::App& app, Context& ctx) {
  struct Flags {
    std::string source, name;
    bool cancel = false;
  };
  auto f = std::make_shared<Flags>();
  auto* pull = app.add_subcommand("pull", "Download a model (hf.co/ORG/REPO/FILE.gguf, hf.co/ORG/REPO:QUANT, a URL, or a local .gguf)");
  pull->add_option("source", f->source)->required();
  pull->add_option("--name", f->name, "Store the model under this name");
  pull->add_flag("--cancel", f->cancel, "Cancel a running pull of this source");
  pull->callback([&ctx, f] {
    if (f->cancel) {
      if (!ctx.call("DELETE", "/api/pull", nlohmann::json{{"model", f->source}}).is_null())
        std::printf("cancelled pull of '%s'\n", f->source.c_str());
      return;
    }
    pull_with_progress(ctx, f->source, f->name);
  });
}

}  // namespace nurl::client
