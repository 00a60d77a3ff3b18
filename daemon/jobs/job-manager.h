// JobManager: the daemon's one queue for long work (pull, convert, quantize; see job-kind.h).
//
// - submit(kind, request) plans the request, attaches it to an unfinished job with the same key
//   (two pulls of one source, two conversions of one checkpoint to one type and target share one
//   job), or starts a new one.
// - CPU-heavy kinds wait in a FIFO for one of `workers` job workers; those threads run at low
//   priority (SCHED_BATCH and a nice value), which the library threads a job starts inherit, and
//   give each job at most `threads` threads. Pulls get a thread each and run beside them.
// - Every change is persisted as <home>/jobs/<id>.json (temp + fsync + rename): the snapshot, the
//   request and the kind's durable state (a resume point). After a restart, restore() lists
//   finished jobs and runs unfinished ones again, which resume according to their kind.
// - cancel(id) stops a job and discards its partial output; a daemon shutdown (the destructor)
//   stops jobs without discarding, so they resume.
#pragma once

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "jobs/http-fetch.h"
#include "jobs/job-kind.h"
#include "jobs/job.h"
#include "jobs/pull.h"
#include "store/store.h"

namespace nurl {

struct JobsConfig {
  int workers = 1;  // job_workers: CPU-heavy jobs that run at once
  int threads = 0;  // job_threads: the most threads one job uses (0: half the cores, at least 1)
  int nice = 10;    // niceness of job worker threads (they also run SCHED_BATCH)
};

// The priority job workers run at: SCHED_BATCH and `nice`, for the calling thread only (threads
// it creates afterwards inherit both). Errors are returned, not fatal: a job at normal priority
// still works.
Result<void> lower_thread_priority(int nice);

class JobManager {
 public:
  // Registers the built-in kinds (pull, convert, quantize).
  JobManager(Store& store, PullConfig pull, Logger& log, JobsConfig cfg = {});
  // Stops running jobs without cancelling them (their state stays unfinished on disk, so the
  // next daemon resumes them) and joins every thread.
  ~JobManager();
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Adds (or replaces) a kind; call before restore() and submit().
  void add_kind(std::unique_ptr<JobKind> kind);

  // Loads <home>/jobs: finished jobs become listable, unfinished ones run again.
  Result<void> restore();
  // Starts a job, or returns the unfinished job with the same kind and key.
  Result<std::shared_ptr<Job>> submit(const std::string& kind, const nlohmann::json& request);
  Result<std::shared_ptr<Job>> pull(const PullRequest& req);  // submit("pull", …)

  std::shared_ptr<Job> find(const std::string& id) const;
  std::vector<JobSnapshot> list() const;
  // One job as the API shows it: the snapshot with every event, its request and timestamps.
  Result<nlohmann::json> describe(const std::string& id) const;
  // Cancels and discards the partial output. not_found for an unknown id.
  Result<void> cancel(const std::string& id);

  const JobsConfig& config() const { return cfg_; }

 private:
  struct Entry {
    std::shared_ptr<Job> job;
    const JobKind* kind = nullptr;
    JobPlan plan;
    nlohmann::json saved;  // the kind's durable state
    std::string created_at;
    std::thread thread;    // light kinds: the job's own thread
    bool queued = false;   // heavy kinds: waiting for a worker
  };
  std::shared_ptr<Job> start_locked(const std::string& id, const JobKind& kind, JobPlan plan, nlohmann::json saved,
                                    const std::string& created_at);
  void execute(const std::string& id);
  void worker_loop();
  void persist(const std::string& id);
  JobContext context_for(const std::string& id, Entry& e);
  std::filesystem::path work_dir(const std::string& id) const;
  void remove_orphan_outputs();

  Store& store_;
  Logger& log_;
  const JobsConfig cfg_;
  CurlGlobal curl_;
  std::map<std::string, std::unique_ptr<JobKind>> kinds_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> jobs_;  // by id
  std::deque<std::string> queue_;      // heavy jobs waiting for a worker, oldest first
  std::condition_variable queue_cv_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
  std::mutex persist_mu_;
};

}  // namespace nurl
