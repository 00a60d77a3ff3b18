// `jobs` lists the daemon's jobs (pulls, conversions, quantisations); `jobs --follow ID` shows a
// job's progress until it ends; `jobs --cancel ID` stops it and removes its partial output.
#include <ctime>

#include "client/context.h"
#include "client/format.h"

namespace nurl::client {

namespace {

std::string progress_text(const nlohmann::json& j) {
  auto p = j.value("progress", nlohmann::json::object());
  std::string s = p.value("status", "");
  uint64_t total = p.value("total", uint64_t(0)), done = p.value("completed", uint64_t(0));
  if (total) s += " " + std::to_string(done * 100 / total) + "%";
  return s;
}

void list_jobs(Context& ctx) {
  auto j = ctx.call("GET", "/api/jobs");
  if (j.is_null()) return;
  std::vector<std::vector<std::string>> rows{{"ID", "KIND", "STATE", "PROGRESS", "MAKES", "CREATED"}};
  int64_t now = int64_t(std::time(nullptr));
  for (const auto& job : j.value("jobs", nlohmann::json::array())) {
    std::string state = job.value("state", "");
    std::string progress = state == "failed" ? job.value("error", "") : progress_text(job);
    if (progress.size() > 60) progress = progress.substr(0, 57) + "...";
    rows.push_back({job.value("id", ""), job.value("kind", ""), state, progress, job.value("name", ""),
                    human_ago(parse_rfc3339(job.value("created_at", "")), now)});
  }
  std::fputs(render_table(rows).c_str(), stdout);
}

}  // namespace

void add_jobs_command(CLI::App& app, Context& ctx) {
  struct Flags {
    std::string follow, cancel;
  };
  auto f = std::make_shared<Flags>();
  auto* jobs = app.add_subcommand("jobs", "List the daemon's jobs; follow or cancel one");
  jobs->add_option("--follow", f->follow, "Show the progress of job ID until it ends");
  jobs->add_option("--cancel", f->cancel, "Cancel job ID (its partial output is removed)");
  jobs->callback([&ctx, f] {
    if (!f->cancel.empty()) {
      if (!ctx.call("DELETE", "/api/jobs/" + f->cancel).is_null()) std::printf("cancelled %s\n", f->cancel.c_str());
      return;
    }
    if (!f->follow.empty()) {
      stream_progress(ctx, "GET", "/api/jobs/" + f->follow + "?stream=true", nullptr);
      return;
    }
    list_jobs(ctx);
  });
}

}  // namespace nurl::client
