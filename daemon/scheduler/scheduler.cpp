#include "scheduler/scheduler.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace nurl::sched {

struct Scheduler::Resident {
  std::string name;
  LoadSpec spec;
  uint64_t bytes = 0;
  ModelFacts facts;
  std::shared_ptr<LoadedModel> model;
  std::unique_ptr<Worker> worker;
  int active = 0;
  Nanos keep_alive{0};          // from the latest job
  bool forever = false;
  Clock::time_point expires_at;
};

uint64_t default_memory_budget() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string key;
    uint64_t kib = 0;
    ss >> key >> kib;
    if (key == "MemAvailable:") return kib * 1024 / 10 * 9;
  }
  return 0;
}

namespace {

std::string mib(uint64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MiB"; }

// The reply formats chosen from the model's template, for the load log: "tools=hermes thinking=think".
std::string reply_formats(const ModelFacts& f) {
  return "tools=" + (f.tools && !f.tool_format.empty() ? f.tool_format : "none") +
         " thinking=" + (f.thinking && !f.think_format.empty() ? f.think_format : "none");
}

}  // namespace

Scheduler::Scheduler(SchedulerConfig cfg, ModelLoader loader, Logger& log, Observer* observer)
    : loader_(std::move(loader)), log_(log), observer_(observer ? observer : &none_), cfg_(cfg) {
  thread_ = std::thread([this] { loop(); });
}

Scheduler::~Scheduler() { stop(); }

void Scheduler::reconfigure(SchedulerConfig cfg) {
  std::lock_guard lk(mu_);
  cfg_ = cfg;
  cv_.notify_all();
}

size_t Scheduler::waiting() const {
  std::lock_guard lk(mu_);
  return waiting_;
}

std::shared_ptr<Scheduler::Resident> Scheduler::find(const LoadSpec& spec) {
  for (auto& r : residents_)
    if (r->spec == spec) return r;
  return nullptr;
}

uint64_t Scheduler::used_bytes() const {
  uint64_t sum = 0;
  for (const auto& r : residents_) sum += r->bytes;
  return sum;
}

Nanos Scheduler::keep_alive_of(const Job& job) const { return job.keep_alive ? *job.keep_alive : cfg_.default_keep_alive; }

void Scheduler::set_expiry(Resident& r, Nanos ka) {
  r.keep_alive = ka;
  r.forever = ka.count() < 0;
  r.expires_at = Clock::now() + (r.forever ? Nanos(0) : ka);
}

Result<void> Scheduler::submit(std::shared_ptr<Job> job) {
  std::lock_guard lk(mu_);
  if (stopping_) return Error(Code::busy, "server is shutting down");
  if (job->kind == Job::Kind::unload) {
    bool found = false;
    for (auto& r : residents_) {
      if (r->spec.path != job->spec.path) continue;
      found = true;
      set_expiry(*r, Nanos(0));
    }
    (void)found;
    Event e;
    e.kind = Event::Kind::done;
    e.done.reason = "unload";
    job->send(std::move(e));
    job->out->close();
    cv_.notify_all();
    return ok();
  }
  if (waiting_ >= static_cast<size_t>(std::max(cfg_.max_queue, 1))) return Error(Code::busy, "server busy");
  if (counts_for_user(*job)) {
    int& n = user_jobs_[job->user];
    if (cfg_.user_max_generations > 0 && n >= cfg_.user_max_generations) {
      return Error(Code::rate_limited, "you already have " + std::to_string(n) +
                                           " replies running or queued (the limit per user is " +
                                           std::to_string(cfg_.user_max_generations) + "); retry when one finishes");
    }
    ++n;
  }
  ++waiting_;
  if (auto r = find(job->spec); r && pending_.empty()) {
    hand_over(*r, std::move(job));
  } else {
    pending_.push_back(std::move(job));
    cv_.notify_all();
  }
  return ok();
}

void Scheduler::hand_over(Resident& r, std::shared_ptr<Job> job) {
  ++r.active;
  set_expiry(r, keep_alive_of(*job));
  // Most recently used first.
  auto it = std::find_if(residents_.begin(), residents_.end(), [&](auto& p) { return p.get() == &r; });
  if (it != residents_.end()) residents_.splice(residents_.begin(), residents_, it);
  r.worker->enqueue(std::move(job));
}

bool Scheduler::counts_for_user(const Job& job) { return job.kind == Job::Kind::generate && !job.user.empty(); }

void Scheduler::release_user(const Job& job) {
  if (!counts_for_user(job)) return;
  auto it = user_jobs_.find(job.user);
  if (it != user_jobs_.end() && --it->second <= 0) user_jobs_.erase(it);
}

void Scheduler::on_finished(Resident* r, const Job& job) {
  std::lock_guard lk(mu_);
  release_user(job);
  --r->active;
  if (r->active == 0) set_expiry(*r, r->keep_alive);
  cv_.notify_all();
}

bool Scheduler::unload(const std::string& path) {
  std::lock_guard lk(mu_);
  bool found = false;
  for (auto& r : residents_) {
    if (r->spec.path != path) continue;
    found = true;
    set_expiry(*r, Nanos(0));
  }
  cv_.notify_all();
  return found;
}

std::vector<ResidentInfo> Scheduler::resident() const {
  std::lock_guard lk(mu_);
  std::vector<ResidentInfo> out;
  const auto now_sys = std::chrono::system_clock::now();
  const auto now = Clock::now();
  for (const auto& r : residents_) {
    ResidentInfo i;
    i.name = r->name;
    i.spec = r->spec;
    i.size_bytes = r->bytes;
    i.facts = r->facts;
    i.active = r->active;
    i.forever = r->forever;
    auto left = r->active > 0 ? r->keep_alive : std::chrono::duration_cast<Nanos>(r->expires_at - now);
    i.expires_at = now_sys + std::chrono::duration_cast<std::chrono::system_clock::duration>(left);
    out.push_back(std::move(i));
  }
  return out;
}

void Scheduler::unload_where(std::unique_lock<std::mutex>& lk, const std::function<bool(const Resident&)>& pick,
                             const char* why, Observer::Unload kind) {
  std::vector<std::shared_ptr<Resident>> gone;
  for (auto it = residents_.begin(); it != residents_.end();) {
    if (pick(**it)) {
      gone.push_back(*it);
      it = residents_.erase(it);
    } else {
      ++it;
    }
  }
  if (gone.empty()) return;
  lk.unlock();  // workers call on_finished(), which locks mu_
  for (auto& r : gone) {
    log_.info("scheduler: unloading " + r->name + " (" + why + ")", {.model = r->name});
    r->worker->stop("model " + r->name + " unloaded");
    observer_->model_unloaded(kind);
  }
  gone.clear();
  lk.lock();
}

void Scheduler::loop() {
  std::unique_lock lk(mu_);
  while (!stopping_) {
    // 1. Expire idle models whose keep-alive ran out.
    const auto now = Clock::now();
    unload_where(lk, [&](const Resident& r) { return r.active == 0 && !r.forever && r.expires_at <= now; },
                 "keep-alive expired", Observer::Unload::expired);
    if (stopping_) break;

    // 2. Serve waiting jobs in order; the first that cannot get room blocks the rest (fairness).
    while (!pending_.empty() && !stopping_) {
      auto job = pending_.front();
      if (job->cancelled()) {
        pending_.pop_front();
        --waiting_;
        release_user(*job);
        job->out->close();
        continue;
      }
      if (auto r = find(job->spec)) {
        pending_.pop_front();
        hand_over(*r, job);
        continue;
      }
      const LoadSpec spec = job->spec;
      lk.unlock();
      auto est = loader_.estimate(spec);
      lk.lock();
      if (!est.ok()) {
        pending_.pop_front();
        --waiting_;
        release_user(*job);
        job->fail(est.error());
        continue;
      }
      auto fits = [&] {
        return static_cast<int>(residents_.size()) < cfg_.max_loaded_models &&
               (cfg_.memory_budget == 0 || used_bytes() + *est <= cfg_.memory_budget);
      };
      if (!fits()) {
        // Evict idle models, least recently used first; same file with another shape first.
        while (!fits()) {
          std::shared_ptr<Resident> victim;
          for (auto it = residents_.rbegin(); it != residents_.rend(); ++it)
            if ((*it)->active == 0 && (*it)->spec.path == spec.path) { victim = *it; break; }
          if (!victim)
            for (auto it = residents_.rbegin(); it != residents_.rend(); ++it)
              if ((*it)->active == 0) { victim = *it; break; }
          if (!victim) break;
          unload_where(lk, [&](const Resident& r) { return &r == victim.get(); }, "making room",
                       Observer::Unload::evicted);
        }
        if (!fits() && residents_.empty()) {
          pending_.pop_front();
          --waiting_;
          release_user(*job);
          job->fail(Error(Code::internal, "model " + job->model_name + " needs " + mib(*est) +
                                              " but the memory budget is " + mib(cfg_.memory_budget) +
                                              " (set NURLLAMA_MEMORY_BUDGET or a smaller num_ctx)"));
          continue;
        }
        if (!fits()) break;  // wait until a resident model goes idle
      }
      pending_.pop_front();
      lk.unlock();
      log_.info("scheduler: loading " + job->model_name + " (" + spec.path + ", num_ctx " + std::to_string(spec.n_ctx) +
                    ", parallel " + std::to_string(spec.n_parallel) + ", ~" + mib(*est) + ")",
                {.model = job->model_name});
      const auto t0 = Clock::now();
      auto model = loader_.load(spec);
      Result<std::unique_ptr<BatchRunner>> runner = Error(Code::internal, "not loaded");
      if (model.ok()) runner = (*model)->make_runner(spec.n_parallel, spec.n_ctx);
      const Nanos load_ns = std::chrono::duration_cast<Nanos>(Clock::now() - t0);
      observer_->model_loaded(load_ns, model.ok() && runner.ok());
      lk.lock();
      if (!model.ok() || !runner.ok()) {
        Error e = model.ok() ? runner.error() : model.error();
        if (e.code != Code::not_found && e.code != Code::invalid_argument) e.code = Code::internal;
        log_.error("scheduler: loading " + job->model_name + " failed: " + e.msg, {.model = job->model_name});
        --waiting_;
        release_user(*job);
        job->fail(e.context("loading model " + job->model_name));
        continue;
      }
      auto r = std::make_shared<Resident>();
      r->name = job->model_name;
      r->spec = spec;
      r->bytes = *est;
      r->model = *model;
      r->facts = (*model)->facts();
      Resident* raw = r.get();
      Worker::Hooks hooks{
          [this](const Job& j) {
            observer_->job_started(std::chrono::duration_cast<Nanos>(Clock::now() - j.submitted));
            std::lock_guard g(mu_);
            if (waiting_ > 0) --waiting_;
          },
          [this, raw](const Job& j) {
            observer_->job_finished();
            on_finished(raw, j);
          },
          observer_};
      r->worker = std::make_unique<Worker>(r->name, r->model, std::move(*runner), log_, std::move(hooks));
      residents_.push_front(r);
      log_.info("scheduler: loaded " + job->model_name + " in " + std::to_string(load_ns.count() / 1000000) + " ms (" +
                    (r->facts.kernels.empty() ? "" : "kernels " + r->facts.kernels + "; ") + reply_formats(r->facts) + ")",
                {.model = job->model_name});
      job->load_duration = load_ns;
      hand_over(*r, job);
    }

    // 3. Sleep until something changes or the next keep-alive expires.
    auto next = Clock::time_point::max();
    for (const auto& r : residents_)
      if (r->active == 0 && !r->forever) next = std::min(next, r->expires_at);
    if (next == Clock::time_point::max()) cv_.wait(lk);
    else cv_.wait_until(lk, next);
  }
}

void Scheduler::stop() {
  std::deque<std::shared_ptr<Job>> left;
  {
    std::lock_guard lk(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    left.swap(pending_);
    waiting_ -= std::min(waiting_, left.size());
    for (const auto& j : left) release_user(*j);
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  for (auto& j : left) j->fail(Error(Code::cancelled, "server is shutting down"));
  std::unique_lock lk(mu_);
  unload_where(lk, [](const Resident&) { return true; }, "shutting down", Observer::Unload::shutdown);
}

}  // namespace nurl::sched
