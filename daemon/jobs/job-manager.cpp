// JobManager (see job-manager.h): kinds, attach-by-key, the worker pool, persistence, restore.
// Lock order: persist_mu_ before mu_; nothing that persists is called with mu_ held.
#include "jobs/job-manager.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "api/json-fields.h"
#include "jobs/convert.h"
#include "jobs/job-file.h"
#include "jobs/quantize.h"
#include "store/fs-util.h"

namespace nurl {

namespace fs = std::filesystem;

Result<void> lower_thread_priority(int nice) {
  sched_param p{};
  p.sched_priority = 0;
  // On Linux both calls act on the calling thread only (pid 0 / its tid); new threads inherit.
  if (::sched_setscheduler(0, SCHED_BATCH, &p) != 0)
    return Error(Code::io, std::string("sched_setscheduler(SCHED_BATCH): ") + std::strerror(errno));
  auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  if (::setpriority(PRIO_PROCESS, tid, nice) != 0)
    return Error(Code::io, "setpriority(" + std::to_string(nice) + "): " + std::strerror(errno));
  return ok();
}

void fail_job(JobContext& ctx, const std::string& msg) {
  ctx.log.warn(ctx.job.kind() + " " + ctx.job.id() + " failed: " + msg);
  ctx.job.finish(JobState::failed, msg);
  ctx.persist();
}

void succeed_job(JobContext& ctx) {
  ctx.job.emit({"success", "", 0, 0, ""});
  ctx.job.finish(JobState::succeeded);
  ctx.persist();
}

void cancel_job(JobContext& ctx) {
  ctx.job.finish(JobState::cancelled, "cancelled");
  ctx.persist();
}

JobManager::JobManager(Store& store, PullConfig pull, Logger& log, JobsConfig cfg)
    : store_(store), log_(log), cfg_([&] {
        JobsConfig c = cfg;
        c.workers = std::max(1, c.workers);
        if (c.threads <= 0) c.threads = std::max(1, int(std::thread::hardware_concurrency() / 2));
        return c;
      }()) {
  add_kind(make_pull_kind(std::move(pull)));
  add_kind(make_convert_kind());
  add_kind(make_quantize_kind());
  for (int i = 0; i < cfg_.workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

JobManager::~JobManager() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
    for (auto& [id, e] : jobs_) {
      e.job->cancel(/*discard=*/false);
      if (e.thread.joinable()) threads.push_back(std::move(e.thread));
    }
  }
  queue_cv_.notify_all();
  for (auto& t : workers_) t.join();
  for (auto& t : threads) t.join();
}

void JobManager::add_kind(std::unique_ptr<JobKind> kind) {
  std::lock_guard lk(mu_);
  std::string n = kind->name();
  kinds_[n] = std::move(kind);
}

fs::path JobManager::work_dir(const std::string& id) const { return store_.layout().jobs() / (id + ".d"); }

void JobManager::persist(const std::string& id) {
  std::lock_guard plk(persist_mu_);
  std::string text;
  {
    std::lock_guard lk(mu_);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return;
    const Entry& e = it->second;
    text = encode_job_file(e.job->snapshot(), e.plan.request, e.plan.key, e.saved, e.created_at, now_rfc3339());
  }
  auto r = write_file_atomic(store_.layout().jobs() / (id + ".json"), text);
  if (!r.ok()) log_.warn("saving job state: " + r.error().msg);
}

JobContext JobManager::context_for(const std::string& id, Entry& e) {
  int threads = cfg_.threads;
  if (int asked = jf::int_in(e.plan.request, "threads", 0, 4096, 0); asked > 0) threads = std::min(threads, asked);
  return JobContext{store_,
                    *e.job,
                    log_,
                    e.plan.request,
                    e.saved,
                    threads,
                    work_dir(id),
                    [this, id](const nlohmann::json& s) {
                      {
                        std::lock_guard lk(mu_);
                        if (auto it = jobs_.find(id); it != jobs_.end()) it->second.saved = s;
                      }
                      persist(id);
                    },
                    [this, id] { persist(id); }};
}

void JobManager::execute(const std::string& id) {
  std::shared_ptr<Job> job;
  const JobKind* kind = nullptr;
  JobPlan plan;
  nlohmann::json saved;
  {
    std::lock_guard lk(mu_);
    Entry& e = jobs_.at(id);
    job = e.job;
    kind = e.kind;
    plan = e.plan;
    saved = e.saved;
  }
  Entry view{job, kind, plan, saved, {}, {}, false};
  JobContext ctx = context_for(id, view);
  if (job->stop_requested() && job->discard_requested()) {
    kind->discard(ctx);
    cancel_job(ctx);
  } else if (!job->stop_requested()) {
    kind->run(ctx);
  }
  if (job_done(job->snapshot().state)) {
    std::error_code ec;
    fs::remove_all(ctx.work_dir, ec);
  }
}

void JobManager::worker_loop() {
  if (auto r = lower_thread_priority(cfg_.nice); !r.ok()) log_.warn("job worker: " + r.error().msg);
  while (true) {
    std::string id;
    {
      std::unique_lock lk(mu_);
      queue_cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      id = queue_.front();
      queue_.pop_front();
      jobs_.at(id).queued = false;
    }
    execute(id);
  }
}

std::shared_ptr<Job> JobManager::start_locked(const std::string& id, const JobKind& kind, JobPlan plan,
                                              nlohmann::json saved, const std::string& created_at) {
  auto job = std::make_shared<Job>(id, kind.name(), plan.key, plan.name, created_at);
  Entry& e = jobs_[id];
  e.job = job;
  e.kind = &kind;
  e.plan = std::move(plan);
  e.saved = std::move(saved);
  e.created_at = created_at;
  if (kind.heavy()) {
    e.queued = true;
    queue_.push_back(id);
    queue_cv_.notify_one();
  } else {
    e.thread = std::thread([this, id] { execute(id); });
  }
  return job;
}

Result<std::shared_ptr<Job>> JobManager::submit(const std::string& kind_name, const nlohmann::json& request) {
  std::shared_ptr<Job> job;
  std::vector<std::thread> finished;
  {
    std::lock_guard lk(mu_);
    auto k = kinds_.find(kind_name);
    if (k == kinds_.end()) return Error(Code::invalid_argument, "unknown job kind \"" + kind_name + "\"");
    NURL_ASSIGN(JobPlan plan, k->second->plan(request));
    for (auto& [id, e] : jobs_)
      if (e.kind == k->second.get() && e.plan.key == plan.key && !job_done(e.job->snapshot().state) &&
          !e.job->stop_requested())
        return e.job;
    if (stopping_) return Error(Code::busy, "the daemon is shutting down");
    // Reap finished threads before starting another.
    for (auto& [id, e] : jobs_)
      if (e.thread.joinable() && job_done(e.job->snapshot().state)) finished.push_back(std::move(e.thread));
    std::random_device rd;
    char id[48];
    std::snprintf(id, sizeof id, "%s-%08x%04x", kind_name.c_str(), rd(), rd() & 0xffff);
    job = start_locked(id, *k->second, std::move(plan), nullptr, now_rfc3339());
  }
  for (auto& t : finished) t.join();
  persist(job->id());
  return job;
}

Result<std::shared_ptr<Job>> JobManager::pull(const PullRequest& req) {
  return submit("pull", {{"source", req.source}, {"name", req.name}});
}

Result<void> JobManager::restore() {
  const fs::path dir = store_.layout().jobs();
  NURL_TRY(make_dirs(dir));
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string f = it->path().filename().string();
    if (f.rfind(std::string(kTempPrefix), 0) == 0) {
      fs::remove(it->path(), ec);  // a write cut short by a crash: the old file is intact
      continue;
    }
    if (it->path().extension() == ".json" && f[0] != '.') files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> started;
  {
    std::lock_guard lk(mu_);
    for (const auto& f : files) {
      auto text = read_small_file(f);
      if (!text.ok()) continue;
      auto file = decode_job_file(*text, f.stem().string());
      if (!file.ok()) {
        log_.warn("ignoring job file " + f.string() + ": " + file.error().msg);
        continue;
      }
      const std::string& id = file->id;
      if (jobs_.count(id)) continue;
      auto k = kinds_.find(file->kind);
      if (k == kinds_.end()) {
        log_.warn("ignoring job " + id + " of unknown kind " + file->kind);
        continue;
      }
      auto plan = k->second->plan(file->request);
      if (!plan.ok()) {
        log_.warn("ignoring job " + id + ": " + plan.error().msg);
        continue;
      }
      if (file->state == "queued" || file->state == "running") {
        log_.info("resuming job " + id + " (" + plan->key + ")");
        start_locked(id, *k->second, std::move(*plan), file->saved, file->created_at);
        started.push_back(id);
        continue;
      }
      auto job = std::make_shared<Job>(id, k->second->name(), plan->key, plan->name, file->created_at);
      JobState s = file->state == "succeeded" ? JobState::succeeded
                   : file->state == "cancelled" ? JobState::cancelled : JobState::failed;
      if (file->progress) job->emit(*file->progress);
      job->finish(s, file->error);
      Entry& e = jobs_[id];
      e.job = job;
      e.kind = k->second.get();
      e.plan = std::move(*plan);
      e.saved = file->saved;
      e.created_at = file->created_at;
      fs::remove_all(work_dir(id), ec);  // a crash between the end and the clean-up
    }
  }
  for (const auto& id : started) persist(id);
  remove_orphan_outputs();
  return ok();
}

void JobManager::remove_orphan_outputs() {
  // job-<id>.gguf[.partial] in blobs/ belong to an unfinished job or to nothing (its job file was
  // removed, or it ended between the output and its clean-up).
  std::lock_guard lk(mu_);
  std::error_code ec;
  for (auto it = fs::directory_iterator(store_.layout().blobs(), ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string f = it->path().filename().string();
    if (f.rfind("job-", 0) != 0) continue;
    std::string id = f.substr(4, f.find(".gguf") == std::string::npos ? std::string::npos : f.find(".gguf") - 4);
    auto e = jobs_.find(id);
    if (e == jobs_.end() || job_done(e->second.job->snapshot().state)) fs::remove(it->path(), ec);
  }
}

std::shared_ptr<Job> JobManager::find(const std::string& id) const {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.job;
}

std::vector<JobSnapshot> JobManager::list() const {
  std::vector<JobSnapshot> out;
  {
    std::lock_guard lk(mu_);
    for (const auto& [id, e] : jobs_) out.push_back(e.job->snapshot());
  }
  std::sort(out.begin(), out.end(), [](const JobSnapshot& a, const JobSnapshot& b) {
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
  });
  return out;
}

Result<nlohmann::json> JobManager::describe(const std::string& id) const {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Error(Code::not_found, "no job " + id);
  JobSnapshot s = it->second.job->snapshot();
  nlohmann::json j = s.to_json();
  j["events"] = nlohmann::json::array();
  for (const auto& e : s.events) j["events"].push_back(e.to_json());
  j["request"] = it->second.plan.request;
  if (it->second.queued) {
    auto pos = std::find(queue_.begin(), queue_.end(), id);
    j["queue_position"] = pos - queue_.begin();
  }
  return j;
}

Result<void> JobManager::cancel(const std::string& id) {
  std::shared_ptr<Job> job;
  bool was_queued = false;
  Entry view;
  {
    std::lock_guard lk(mu_);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return Error(Code::not_found, "no job " + id);
    Entry& e = it->second;
    job = e.job;
    if (e.queued) {
      queue_.erase(std::remove(queue_.begin(), queue_.end(), id), queue_.end());
      e.queued = false;
      was_queued = true;
      view = Entry{e.job, e.kind, e.plan, e.saved, e.created_at, {}, false};
    }
  }
  job->cancel(true);
  if (was_queued && !job_done(job->snapshot().state)) {
    // Nothing runs it: discard what an earlier run left and end it here.
    JobContext ctx = context_for(id, view);
    view.kind->discard(ctx);
    cancel_job(ctx);
    std::error_code ec;
    fs::remove_all(ctx.work_dir, ec);
  }
  return ok();
}

}  // namespace nurl
