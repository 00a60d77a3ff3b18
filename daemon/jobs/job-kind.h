// JobKind: what one kind of job (pull, convert, quantize) tells the JobManager. The manager owns
// threads, queueing, attach, persistence, cancel and restart; a kind only plans a request and
// runs it. Each kind is one file (pull.cpp, convert.cpp, quantize.cpp).
//
// Contract of run(): it ends the job (succeeded, failed or cancelled) and leaves nothing behind
// on failure or a user cancel (Job::discard_requested()); when stopped for a daemon shutdown
// (stop_requested() without discard) it returns with the job unfinished, keeping what it needs
// to resume (a .part, a .partial plus the resume point it saved). After a restart run() is called
// again with the durable state it saved last (JobContext::saved).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "jobs/job.h"

namespace nurl {

class Store;

// A request, checked and normalised without side effects.
struct JobPlan {
  std::string key;          // jobs with equal keys (of one kind) attach to one
  std::string name;         // what it makes: a model name or an output file (for listings)
  nlohmann::json request;   // the normalised request: persisted, and what run() gets
};

struct JobContext {
  Store& store;
  Job& job;
  Logger& log;
  const nlohmann::json& request;      // JobPlan::request
  nlohmann::json saved;               // the kind's durable state from the last run (null at first)
  int threads = 1;                    // the most worker threads the job may start
  std::filesystem::path work_dir;     // private scratch (<home>/jobs/<id>.d); removed when the job ends
  // Persists the job with a new durable state (`saved`); cheap enough to call per tensor.
  std::function<void(const nlohmann::json&)> save;
  // Persists the job's state and progress (after state changes).
  std::function<void()> persist;
};

class JobKind {
 public:
  virtual ~JobKind() = default;
  virtual std::string name() const = 0;  // "pull"
  // CPU-heavy kinds run on the job workers (a bounded pool at low priority); the others (pulls)
  // get a thread each and run beside them.
  virtual bool heavy() const = 0;
  virtual Result<JobPlan> plan(const nlohmann::json& request) const = 0;
  virtual void run(JobContext& ctx) const = 0;
  // Removes what an unfinished earlier run left (a .part, a .partial) when the job is cancelled
  // before a worker ran it again (a restored job still waiting). Does not finish the job.
  virtual void discard(JobContext&) const {}
};

// Ends the job as failed with `msg` (logged, persisted): the shared ending of every kind.
void fail_job(JobContext& ctx, const std::string& msg);
// Ends the job as succeeded after emitting {"status":"success"} (persisted).
void succeed_job(JobContext& ctx);
// Ends the job as cancelled (persisted).
void cancel_job(JobContext& ctx);

}  // namespace nurl
