// Job bookkeeping (see job.h). Wakers are called outside the lock.
#include "jobs/job.h"

namespace nurl {

nlohmann::json ProgressEvent::to_json() const {
  nlohmann::json j = {{"status", status}};
  if (!digest.empty()) j["digest"] = digest;
  if (total) j["total"] = total;
  if (total || completed) j["completed"] = completed;
  if (!stage.empty()) j["stage"] = stage;
  return j;
}

const char* job_state_name(JobState s) {
  switch (s) {
    case JobState::queued: return "queued";
    case JobState::running: return "running";
    case JobState::succeeded: return "succeeded";
    case JobState::failed: return "failed";
    case JobState::cancelled: return "cancelled";
  }
  return "unknown";
}

nlohmann::json JobSnapshot::to_json() const {
  nlohmann::json j = {{"id", id}, {"kind", kind}, {"source", source}, {"name", name},
                      {"state", job_state_name(state)}};
  if (!events.empty()) j["progress"] = events.back().to_json();
  if (!error.empty()) j["error"] = error;
  if (!created_at.empty()) j["created_at"] = created_at;
  return j;
}

Job::Job(std::string id, std::string kind, std::string source, std::string name, std::string created_at)
    : id_(std::move(id)), kind_(std::move(kind)), source_(std::move(source)), name_(std::move(name)),
      created_at_(std::move(created_at)) {}

JobSnapshot Job::snapshot() const {
  std::lock_guard lk(mu_);
  return JobSnapshot{id_, kind_, source_, name_, state_, events_, error_, created_at_, version_};
}

JobSnapshot Job::wait(uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock lk(mu_);
  cv_.wait_for(lk, timeout, [&] { return version_ > seen || job_done(state_); });
  return JobSnapshot{id_, kind_, source_, name_, state_, events_, error_, created_at_, version_};
}

bool Job::on_change(uint64_t seen, std::function<void()> wake) {
  std::lock_guard lk(mu_);
  if (version_ > seen || job_done(state_)) return false;
  wakers_.push_back(std::move(wake));
  return true;
}

void Job::cancel(bool discard) {
  if (discard) discard_ = true;
  stop_ = true;
  std::lock_guard lk(mu_);
  cv_.notify_all();
}

void Job::changed_locked(std::vector<std::function<void()>>& fire) {
  ++version_;
  fire.swap(wakers_);
  cv_.notify_all();
}

void Job::set_state(JobState s) {
  std::vector<std::function<void()>> fire;
  {
    std::lock_guard lk(mu_);
    state_ = s;
    changed_locked(fire);
  }
  for (auto& f : fire) f();
}

void Job::emit(ProgressEvent e) {
  std::vector<std::function<void()>> fire;
  {
    std::lock_guard lk(mu_);
    events_.push_back(std::move(e));
    changed_locked(fire);
  }
  for (auto& f : fire) f();
}

void Job::progress(uint64_t completed, uint64_t total) {
  std::vector<std::function<void()>> fire;
  {
    std::lock_guard lk(mu_);
    if (events_.empty()) return;
    events_.back().completed = completed;
    events_.back().total = total;
    changed_locked(fire);
  }
  for (auto& f : fire) f();
}

void Job::finish(JobState s, std::string error) {
  std::vector<std::function<void()>> fire;
  {
    std::lock_guard lk(mu_);
    state_ = s;
    error_ = std::move(error);
    changed_locked(fire);
  }
  for (auto& f : fire) f();
}

}  // namespace nurl
