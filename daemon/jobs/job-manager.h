// JobManager: owns the daemon's jobs (pulls). Starts each on its own thread, attaches a second
// pull of the same source to the running job, cancels on request, persists every job as
// <home>/jobs/<id>.json and, after a restart, restore() lists finished jobs and resumes
// unfinished ones (the partial download is re-hashed and continued with a Range request).
//
// Pull sources: hf.co/ORG/REPO/FILE.gguf, hf.co/ORG/REPO[:QUANT] (file chosen from the repo's file
// list), http(s):// URLs, and local paths (./x.gguf, /abs/x.gguf). See pull.h for the download.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/model-name.h"
#include "core/error.h"
#include "core/log.h"
#include "jobs/http-fetch.h"
#include "jobs/job.h"
#include "store/store.h"

namespace nurl {

struct PullConfig {
  std::string hf_endpoint = "https://huggingface.co";  // HF_ENDPOINT (mirrors, tests)
  std::string hf_token;                                // HF_TOKEN: sent only to hf_endpoint
  int max_attempts = 6;           // failed attempts in a row (without new bytes) before giving up
  std::chrono::milliseconds backoff{500};  // first retry delay; doubles, capped at 30 s
  long connect_timeout_s = 20;
  long low_speed_time_s = 60;     // a transfer below 1 byte/s this long is retried
  long max_redirects = 10;

  static PullConfig from_env(const std::function<const char*(const char*)>& getenv);
};

struct PullRequest {
  std::string source;  // model ref, URL or local path
  std::string name;    // model name to create; empty: derived from the source
};

// What a source means, decided without network access.
struct PullPlan {
  enum class Kind { url, hf, local };
  Kind kind = Kind::url;
  std::string key;              // normalised source: pulls with equal keys share one job
  std::string url;              // url: the file; hf: set once the file is known
  std::filesystem::path local;  // local
  ModelName name;               // the model it creates
  ModelName hf;                 // hf: the reference (tag = file or quant)
};
Result<PullPlan> plan_pull(const PullRequest& req);

class JobManager {
 public:
  // `on_bytes` is told every downloaded chunk's size (metrics); may be empty.
  JobManager(Store& store, PullConfig cfg, Logger& log, std::function<void(uint64_t)> on_bytes = {});
  // Stops running jobs without cancelling them (their state stays "running" on disk, so the next
  // daemon resumes them) and joins their threads.
  ~JobManager();
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Loads <home>/jobs: finished jobs become listable, unfinished ones start again.
  Result<void> restore();
  // Starts a pull, or returns the running job for the same source.
  Result<std::shared_ptr<Job>> pull(const PullRequest& req);
  std::shared_ptr<Job> find(const std::string& id) const;
  std::vector<JobSnapshot> list() const;
  // Cancels and discards the partial download. not_found for an unknown id.
  Result<void> cancel(const std::string& id);

 private:
  struct Entry {
    std::shared_ptr<Job> job;
    PullRequest req;
    std::string created_at;
    std::thread thread;
  };
  std::shared_ptr<Job> start_locked(const std::string& id, const PullRequest& req, const PullPlan& plan,
                                    const std::string& created_at);
  void persist(const Job& job, const PullRequest& req, const std::string& created_at);
  void run(std::shared_ptr<Job> job, PullRequest req, PullPlan plan, std::string created_at);

  Store& store_;
  const PullConfig cfg_;
  Logger& log_;
  std::function<void(uint64_t)> on_bytes_;
  CurlGlobal curl_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> jobs_;  // by id
  std::mutex persist_mu_;
};

}  // namespace nurl
