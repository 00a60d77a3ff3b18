// ThreadPool implementation: spin-then-block waits on C++20 atomics (futex on Linux).
#include "engine/runtime/thread-pool.h"

#include <algorithm>
#include <chrono>

#include "kernels/cpu/cpu-features.h"

namespace nurl {
namespace {

constexpr int kSpinIters = 4000;
constexpr int kWindowJobs = 256;          // about two decode steps of a small model
constexpr double kStallFraction = 0.35;   // caller idle this much of the window: a worker stalls
constexpr int64_t kLongWaitNs = 400'000;  // one wait this long: a worker lost its core mid-task
constexpr int kLongWaitsToDrop = 2;       // long waits within a window that drop a thread
constexpr int64_t kBaseBackoffJobs = 1024;
constexpr int kMaxBackoffShift = 6;
constexpr int64_t kMinPatienceNs = 20'000;  // before the caller recomputes a task another thread holds

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}  // ~tens of µs: long enough to catch the next matmul of a layer

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

constexpr uint64_t pack(uint32_t gen, uint32_t n_tasks, uint32_t next) {
  return (static_cast<uint64_t>(gen & 0xffff) << 48) | (static_cast<uint64_t>(n_tasks & 0xffffff) << 24) |
         (next & 0xffffff);
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0) n_threads = std::max(1, detect_cpu_features().n_cores);
  published_ = std::make_unique<std::atomic<uint32_t>[]>(kMaxRecomputableTasks);
  slots_ = std::make_unique<WorkerSlot[]>(static_cast<size_t>(n_threads));
  n_active_ = n_target_ = n_threads;
  n_joined_.store(n_threads - 1);
  for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  gen_.fetch_add(1);
  gen_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::set_n_threads(int n) {
  n_target_ = std::clamp(n, 1, max_threads());
  reduced_jobs_left_ = 0;
  strikes_ = 0;
  win_total_ns_ = win_wait_ns_ = 0;
  win_jobs_ = win_long_waits_ = 0;
  probing_ = false;
  apply_active(n_target_);
}

void ThreadPool::apply_active(int n) {
  n_active_ = n;
  n_joined_.store(n - 1);
}

// Two signs that a worker's core is taken by another process: one join waits for a worker
// far longer than a task takes (it was descheduled holding a task), or the caller spends much
// of a window waiting. Either drops one thread for a back-off period; then the full count is
// probed again, and while probing the first long wait ends the probe at once (a probe costs
// one stall, not a window of them). The back-off doubles while contention lasts.
void ThreadPool::adapt(int64_t total_ns, int64_t wait_ns) {
  if (reduced_jobs_left_ > 0) {
    if (--reduced_jobs_left_ == 0) {
      apply_active(n_target_);  // probe the full count again
      probing_ = true;
      win_total_ns_ = win_wait_ns_ = 0;
      win_jobs_ = win_long_waits_ = 0;
    }
    return;
  }
  const bool long_wait = wait_ns > kLongWaitNs && 2 * wait_ns > total_ns;
  win_total_ns_ += total_ns;
  win_wait_ns_ += wait_ns;
  win_long_waits_ += long_wait ? 1 : 0;
  ++win_jobs_;
  const bool window_done = win_jobs_ >= kWindowJobs;
  bool stalled = (probing_ && long_wait) || win_long_waits_ >= kLongWaitsToDrop;
  if (window_done)
    stalled |= static_cast<double>(win_wait_ns_) > kStallFraction * static_cast<double>(win_total_ns_);
  if (stalled && n_active_ > 1) {
    apply_active(n_active_ - 1);
    reduced_jobs_left_ = kBaseBackoffJobs << std::min(strikes_, kMaxBackoffShift);
    ++strikes_;
    probing_ = false;
  } else if (window_done && !stalled) {
    strikes_ = 0;  // a whole window at the full count without stalls: contention is over
    probing_ = false;
  }
  if (stalled || window_done) {
    win_total_ns_ = win_wait_ns_ = 0;
    win_jobs_ = win_long_waits_ = 0;
  }
}

// A claim first marks the thread as in its prologue, so that the caller of a recomputable job,
// which may return while a late thread still computes, never returns while one is reading the
// job's members or the caller's frame (run_recomputable waits for the marks to clear: a few
// instructions unless the thread was descheduled right there).
int ThreadPool::work_on(uint32_t gen, int thread) {
  std::atomic<uint32_t>& in_prologue = slots_[static_cast<size_t>(thread)].in_prologue;
  int n_run = 0;
  for (;;) {
    if (thread != 0) in_prologue.store(1, std::memory_order_seq_cst);
    uint64_t w = job_.load(std::memory_order_seq_cst);
    uint32_t task = 0;
    for (;;) {
      const uint32_t n_tasks = static_cast<uint32_t>(w >> 24) & 0xffffff;
      task = static_cast<uint32_t>(w) & 0xffffff;
      if ((w >> 48) != (gen & 0xffff) || task >= n_tasks) {
        in_prologue.store(0, std::memory_order_release);
        return n_run;
      }
      if (job_.compare_exchange_weak(w, w + 1, std::memory_order_seq_cst)) break;
    }
    ++n_run;
    // The job cannot finish (nor its members change) before this claimed task is published, or,
    // for a recomputable job, before this thread leaves its prologue.
    if (const RecomputeOps* ops = ops_) {
      const RecomputeOps o = *ops;
      alignas(64) unsigned char desc[kMaxDesc];
      o.prepare(ctx_, static_cast<int>(task), desc);
      in_prologue.store(0, std::memory_order_release);
      compute_and_publish(o, desc, static_cast<int>(task), gen);
      continue;
    }
    const TaskFn fn = fn_;
    void* const ctx = ctx_;
    in_prologue.store(0, std::memory_order_release);
    fn(ctx, static_cast<int>(task), thread);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

bool ThreadPool::compute_and_publish(const RecomputeOps& ops, const void* desc, int task, uint32_t gen) {
  ops.compute(desc);
  // Publish only if no thread did for this job yet: published_[task] holds an older generation.
  std::atomic<uint32_t>& p = published_[static_cast<size_t>(task)];
  uint32_t v = p.load(std::memory_order_acquire);
  do {
    if (static_cast<int32_t>(v - gen) >= 0) return false;
  } while (!p.compare_exchange_weak(v, gen, std::memory_order_acq_rel));
  ops.publish(desc);
  if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  return true;
}

void ThreadPool::wait_pending() {
  for (int i = 0; i < kSpinIters && pending_.load(std::memory_order_acquire) != 0; ++i) cpu_relax();
  for (;;) {
    int32_t p = pending_.load(std::memory_order_acquire);
    if (p == 0) break;
    pending_.wait(p, std::memory_order_acquire);
  }
}

void ThreadPool::run(int n_tasks, TaskFn fn, void* ctx) {
  if (n_tasks <= 0) return;
  if (n_active_ == 1 || n_tasks == 1) {
    for (int i = 0; i < n_tasks; ++i) fn(ctx, i, 0);
    if (adaptive_ && reduced_jobs_left_ > 0 && n_tasks > 1) adapt(0, 0);
    return;
  }
  fn_ = fn;
  ctx_ = ctx;
  ops_ = nullptr;
  pending_.store(n_tasks, std::memory_order_relaxed);
  uint32_t gen = gen_.load(std::memory_order_relaxed) + 1;
  job_.store(pack(gen, static_cast<uint32_t>(n_tasks), 0), std::memory_order_seq_cst);
  const int64_t t0 = adaptive_ ? now_ns() : 0;
  gen_.store(gen, std::memory_order_release);
  gen_.notify_all();
  work_on(gen, 0);
  const int64_t t1 = adaptive_ ? now_ns() : 0;
  wait_pending();
  if (adaptive_) {
    const int64_t t2 = now_ns();
    adapt(t2 - t0, t2 - t1);
  }
}

// The caller runs tasks until none is left to claim, then gives the other threads about two of
// its own tasks' time; a task still unpublished after that is computed by the caller too.
void ThreadPool::run_recomputable(int n_tasks, const RecomputeOps* ops, void* ctx) {
  if (n_tasks <= 0) return;
  alignas(64) unsigned char desc[kMaxDesc];
  if (n_active_ == 1 || n_tasks == 1) {
    for (int i = 0; i < n_tasks; ++i) {
      ops->prepare(ctx, i, desc);
      ops->compute(desc);
      ops->publish(desc);
    }
    if (adaptive_ && reduced_jobs_left_ > 0 && n_tasks > 1) adapt(0, 0);
    return;
  }
  ctx_ = ctx;
  ops_ = ops;
  pending_.store(n_tasks, std::memory_order_relaxed);
  uint32_t gen = gen_.load(std::memory_order_relaxed) + 1;
  job_.store(pack(gen, static_cast<uint32_t>(n_tasks), 0), std::memory_order_seq_cst);
  const int64_t t0 = now_ns();
  gen_.store(gen, std::memory_order_release);
  gen_.notify_all();
  const int n_mine = work_on(gen, 0);
  const int64_t t1 = now_ns();
  int64_t recompute_ns = 0;
  if (pending_.load(std::memory_order_acquire) != 0) {
    const int64_t patience = std::max<int64_t>(kMinPatienceNs, 2 * (t1 - t0) / std::max(1, n_mine));
    while (pending_.load(std::memory_order_acquire) != 0 && now_ns() - t1 < patience) cpu_relax();
    if (pending_.load(std::memory_order_acquire) != 0) {
      const int64_t r0 = now_ns();
      for (int i = 0; i < n_tasks; ++i) {
        if (static_cast<int32_t>(published_[static_cast<size_t>(i)].load(std::memory_order_acquire) - gen) >= 0)
          continue;
        ops->prepare(ctx, i, desc);
        compute_and_publish(*ops, desc, i, gen);
      }
      recompute_ns = now_ns() - r0;
    }
    wait_pending();  // a thread may be publishing a task right now
  }
  // No thread may still be reading this job's members or the caller's frame.
  (void)job_.load(std::memory_order_seq_cst);
  for (size_t i = 1; i <= workers_.size(); ++i)
    while (slots_[i].in_prologue.load(std::memory_order_seq_cst) != 0) cpu_relax();
  if (adaptive_) {
    const int64_t t2 = now_ns();
    adapt(t2 - t0, t2 - t1 - recompute_ns);
  }
}

void ThreadPool::worker_main(int index) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t g = gen_.load(std::memory_order_acquire);
    for (int i = 0; g == seen && i < kSpinIters; ++i) {
      cpu_relax();
      g = gen_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      gen_.wait(seen, std::memory_order_acquire);
      continue;
    }
    seen = g;
    if (stop_.load()) return;
    if (index <= n_joined_.load(std::memory_order_relaxed)) work_on(g, index);
  }
}

}  // namespace nurl
