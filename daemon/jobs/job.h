// Job: one long-running daemon task (a pull, a conversion, a quantisation) with progress events,
// cancel, and persisted state. The body runs on a job thread; readers (the /api/pull and
// /api/create streams, /api/jobs, tests) watch it through snapshots and a version counter, so a
// reader that goes away never stops the job.
//
// Events follow ollama's progress stream: {"status":"pulling manifest"}, {"status":"pulling
// <digest>", "digest":…, "total":…, "completed":…}, {"status":"verifying sha256 digest"},
// {"status":"writing manifest"}, {"status":"success"}, plus "stage" (what the job is doing, e.g.
// "downloading", "tensors"). Progress updates the last event in place.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nurl {

struct ProgressEvent {
  std::string status;
  std::string digest;
  uint64_t total = 0;
  uint64_t completed = 0;
  std::string stage;
  nlohmann::json to_json() const;  // ollama's ProgressResponse shape, plus "stage" when set
};

enum class JobState { queued, running, succeeded, failed, cancelled };
const char* job_state_name(JobState s);
inline bool job_done(JobState s) { return s == JobState::succeeded || s == JobState::failed || s == JobState::cancelled; }

struct JobSnapshot {
  std::string id;
  std::string kind;     // "pull", "convert", "quantize"
  std::string source;   // what was asked for, normalised (the attach key)
  std::string name;     // the model name it will create
  JobState state = JobState::queued;
  std::vector<ProgressEvent> events;
  std::string error;    // when failed
  std::string created_at;  // RFC 3339 UTC
  uint64_t version = 0; // grows with every change
  nlohmann::json to_json() const;
};

class Job {
 public:
  Job(std::string id, std::string kind, std::string source, std::string name, std::string created_at = {});

  const std::string& id() const { return id_; }
  const std::string& kind() const { return kind_; }
  const std::string& source() const { return source_; }
  JobSnapshot snapshot() const;
  // Blocks until the version passes `seen`, the job ends, or the timeout; returns the snapshot.
  JobSnapshot wait(uint64_t seen, std::chrono::milliseconds timeout) const;
  // Registers a one-shot callback fired on the next change (from the job's thread). Returns false
  // (and registers nothing) when the version already passed `seen`, so no change is missed.
  bool on_change(uint64_t seen, std::function<void()> wake);

  // Ask the job to stop; `discard` (a user cancel) also removes its partial output, while a
  // daemon shutdown keeps it so the restarted daemon resumes.
  void cancel(bool discard = true);
  bool stop_requested() const { return stop_.load(); }
  bool discard_requested() const { return discard_.load(); }

  // --- the job body's side ---
  void set_state(JobState s);
  void emit(ProgressEvent e);                        // a new status line
  void progress(uint64_t completed, uint64_t total); // updates the last line
  void finish(JobState s, std::string error = {});

 private:
  void changed_locked(std::vector<std::function<void()>>& fire);

  const std::string id_, kind_, source_, name_, created_at_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  JobState state_ = JobState::queued;
  std::vector<ProgressEvent> events_;
  std::string error_;
  uint64_t version_ = 0;
  std::vector<std::function<void()>> wakers_;
  std::atomic<bool> stop_{false}, discard_{false};
};

}  // namespace nurl
