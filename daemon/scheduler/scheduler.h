// Scheduler: which models are resident, and who runs where. An LRU of resident models within a
// memory budget and a count limit; per-model keep-alive (expiry unloads idle models); a bounded
// queue of waiting jobs (full → Code::busy, 503). Loads happen on the scheduler's own thread,
// inference on each model's Worker — never on the caller's (I/O) thread: submit() only queues.
// Side effects go through the ModelLoader seam so tests use fakes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/log.h"
#include "scheduler/job.h"
#include "scheduler/model.h"
#include "scheduler/observer.h"
#include "scheduler/worker.h"

namespace nurl::sched {

struct SchedulerConfig {
  int max_loaded_models = 3;
  int num_parallel = 4;
  int max_queue = 512;          // jobs waiting for a model or a slot
  uint64_t memory_budget = 0;   // bytes for resident models; 0 = unlimited
  Nanos default_keep_alive = std::chrono::minutes(5);
  int user_max_generations = 0;  // generate jobs one named user may have queued or running (0 = any)
};

// 90% of MemAvailable at the time of the call (the budget for resident models on CPU).
uint64_t default_memory_budget();

struct ResidentInfo {
  std::string name;             // as first requested
  LoadSpec spec;
  uint64_t size_bytes = 0;      // the estimate charged against the budget
  ModelFacts facts;
  int active = 0;               // jobs queued or running on it
  bool forever = false;         // keep_alive < 0
  std::chrono::system_clock::time_point expires_at;
};

class Scheduler {
 public:
  // `observer` (metrics) outlives the scheduler; null: nobody listens.
  Scheduler(SchedulerConfig cfg, ModelLoader loader, Logger& log, Observer* observer = nullptr);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a job; never blocks on a load. Code::busy when the queue is full; Code::rate_limited
  // when the job's user already has user_max_generations generate jobs queued or running.
  Result<void> submit(std::shared_ptr<Job> job);
  // Unloads models of this file as soon as they are idle; true when one was resident.
  bool unload(const std::string& path);
  std::vector<ResidentInfo> resident() const;
  size_t waiting() const;
  void reconfigure(SchedulerConfig cfg);
  // Fails waiting jobs, ends running ones, unloads everything. Idempotent.
  void stop();

 private:
  struct Resident;
  void loop();
  void hand_over(Resident& r, std::shared_ptr<Job> job);  // mu_ held
  void on_finished(Resident* r, const Job& job);
  static bool counts_for_user(const Job& job);
  void release_user(const Job& job);                       // mu_ held
  std::shared_ptr<Resident> find(const LoadSpec& spec);   // mu_ held
  uint64_t used_bytes() const;                            // mu_ held
  Nanos keep_alive_of(const Job& job) const;              // mu_ held
  void set_expiry(Resident& r, Nanos ka);                 // mu_ held
  // Removes residents picked by `pick` (mu_ held on entry and exit; unlocked while joining).
  void unload_where(std::unique_lock<std::mutex>& lk, const std::function<bool(const Resident&)>& pick,
                    const char* why, Observer::Unload kind);

  ModelLoader loader_;
  Logger& log_;
  Observer none_;
  Observer* observer_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  SchedulerConfig cfg_;
  std::list<std::shared_ptr<Resident>> residents_;  // most recently used first
  std::deque<std::shared_ptr<Job>> pending_;        // waiting for a load or for room
  size_t waiting_ = 0;                              // pending_ + queued in workers, not yet admitted
  std::map<std::string, int> user_jobs_;            // named users' generate jobs not finished
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace nurl::sched
