// JobManager (see job-manager.h): job threads, attach-by-source, persistence and restore.
#include "jobs/job-manager.h"

#include <random>

#include "jobs/pull.h"
#include "store/fs-util.h"

namespace nurl {

namespace fs = std::filesystem;

PullConfig PullConfig::from_env(const std::function<const char*(const char*)>& getenv) {
  PullConfig c;
  if (const char* e = getenv("HF_ENDPOINT"); e && *e) c.hf_endpoint = e;
  while (!c.hf_endpoint.empty() && c.hf_endpoint.back() == '/') c.hf_endpoint.pop_back();
  if (const char* t = getenv("HF_TOKEN"); t && *t) c.hf_token = t;
  return c;
}

Result<PullPlan> plan_pull(const PullRequest& req) {
  const std::string& s = req.source;
  PullPlan p;
  auto derive_name = [&](const std::string& file) -> Result<ModelName> {
    if (!req.name.empty()) return parse_model_name(req.name);
    std::string stem = fs::path(file).stem().string();
    return parse_model_name(sanitize_model_segment(stem));
  };
  if (s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0) {
    if (s.find_first_of(" \r\n\t") != std::string::npos)
      return Error(Code::invalid_argument, "invalid URL \"" + s + "\"");
    p.kind = PullPlan::Kind::url;
    p.url = s;
    p.key = s;
    std::string path = s.substr(0, s.find_first_of("?#"));
    NURL_ASSIGN(p.name, derive_name(path.substr(path.rfind('/') + 1)));
    return p;
  }
  if (s.rfind("./", 0) == 0 || s.rfind("../", 0) == 0 || s.rfind("/", 0) == 0 || s.rfind("~/", 0) == 0) {
    p.kind = PullPlan::Kind::local;
    p.local = fs::absolute(s).lexically_normal();
    p.key = "file:" + p.local.string();
    NURL_ASSIGN(p.name, derive_name(p.local.filename().string()));
    return p;
  }
  NURL_ASSIGN(ModelName n, parse_model_name(s));
  if (!n.is_hf())
    return Error(Code::unsupported, "cannot pull \"" + s + "\": only hf.co/ORG/REPO[:QUANT], hf.co/ORG/REPO/FILE.gguf, "
                                    "http(s) URLs and local .gguf paths are supported (the ollama registry is not)");
  p.kind = PullPlan::Kind::hf;
  p.hf = n;
  p.key = n.display();
  if (!req.name.empty()) {
    NURL_ASSIGN(p.name, parse_model_name(req.name));
  } else {
    p.name = n;
  }
  return p;
}

JobManager::JobManager(Store& store, PullConfig cfg, Logger& log, std::function<void(uint64_t)> on_bytes)
    : store_(store), cfg_(std::move(cfg)), log_(log), on_bytes_(std::move(on_bytes)) {}

JobManager::~JobManager() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lk(mu_);
    for (auto& [id, e] : jobs_) {
      e.job->cancel(/*discard=*/false);
      if (e.thread.joinable()) threads.push_back(std::move(e.thread));
    }
  }
  for (auto& t : threads) t.join();
}

void JobManager::persist(const Job& job, const PullRequest& req, const std::string& created_at) {
  JobSnapshot s = job.snapshot();
  nlohmann::json j = s.to_json();
  j["request"] = {{"source", req.source}, {"name", req.name}};
  j["created_at"] = created_at;
  j["updated_at"] = now_rfc3339();
  std::lock_guard lk(persist_mu_);
  auto r = write_file_atomic(store_.layout().jobs() / (s.id + ".json"), j.dump(2) + "\n");
  if (!r.ok()) log_.warn("saving job state: " + r.error().msg);
}

std::shared_ptr<Job> JobManager::start_locked(const std::string& id, const PullRequest& req, const PullPlan& plan,
                                              const std::string& created_at) {
  auto job = std::make_shared<Job>(id, "pull", plan.key, plan.name.display());
  Entry& e = jobs_[id];
  e.job = job;
  e.req = req;
  e.created_at = created_at;
  persist(*job, req, created_at);
  e.thread = std::thread([this, job, req, plan, created_at] { run(job, req, plan, created_at); });
  return job;
}

void JobManager::run(std::shared_ptr<Job> job, PullRequest req, PullPlan plan, std::string created_at) {
  PullContext ctx{store_, cfg_, *job, log_, [&] { persist(*job, req, created_at); }, on_bytes_};
  log_.info("pull " + job->id() + ": " + plan.key + " -> " + plan.name.display());
  run_pull(ctx, plan);
}

Result<std::shared_ptr<Job>> JobManager::pull(const PullRequest& req) {
  NURL_ASSIGN(PullPlan plan, plan_pull(req));
  std::lock_guard lk(mu_);
  for (auto& [id, e] : jobs_)
    if (e.job->source() == plan.key && !job_done(e.job->snapshot().state) && !e.job->stop_requested()) return e.job;
  // Reap finished threads before starting another.
  for (auto& [id, e] : jobs_)
    if (e.thread.joinable() && job_done(e.job->snapshot().state)) e.thread.join();
  std::random_device rd;
  char id[32];
  std::snprintf(id, sizeof id, "pull-%08x%04x", rd(), rd() & 0xffff);
  return start_locked(id, req, plan, now_rfc3339());
}

Result<void> JobManager::restore() {
  std::error_code ec;
  fs::create_directories(store_.layout().jobs(), ec);
  std::vector<fs::path> files;
  for (auto it = fs::directory_iterator(store_.layout().jobs(), ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    if (it->path().extension() == ".json" && it->path().filename().string()[0] != '.') files.push_back(it->path());
  std::lock_guard lk(mu_);
  for (const auto& f : files) {
    auto text = read_small_file(f);
    if (!text.ok()) continue;
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object() || !j.contains("request")) {
      log_.warn("ignoring unreadable job file " + f.string());
      continue;
    }
    std::string id = j.value("id", "");
    if (id.empty() || id.find('/') != std::string::npos || jobs_.count(id)) continue;
    PullRequest req{j["request"].value("source", ""), j["request"].value("name", "")};
    auto plan = plan_pull(req);
    if (!plan.ok()) continue;
    std::string state = j.value("state", "");
    std::string created_at = j.value("created_at", "");
    if (state == "queued" || state == "running") {
      log_.info("resuming job " + id + " (" + req.source + ")");
      start_locked(id, req, *plan, created_at);
      continue;
    }
    auto job = std::make_shared<Job>(id, "pull", plan->key, plan->name.display());
    JobState s = state == "succeeded" ? JobState::succeeded
                 : state == "cancelled" ? JobState::cancelled : JobState::failed;
    job->finish(s, j.value("error", ""));
    jobs_[id] = Entry{job, req, created_at, {}};
  }
  return ok();
}

std::shared_ptr<Job> JobManager::find(const std::string& id) const {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.job;
}

std::vector<JobSnapshot> JobManager::list() const {
  std::lock_guard lk(mu_);
  std::vector<JobSnapshot> out;
  for (const auto& [id, e] : jobs_) out.push_back(e.job->snapshot());
  return out;
}

Result<void> JobManager::cancel(const std::string& id) {
  auto job = find(id);
  if (!job) return Error(Code::not_found, "no job " + id);
  job->cancel(true);
  return ok();
}

}  // namespace nurl
