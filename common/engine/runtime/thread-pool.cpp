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

void ThreadPool::work_on(uint32_t gen, int thread) {
  uint64_t w = job_.load(std::memory_order_acquire);
  for (;;) {
    if ((w >> 48) != (gen & 0xffff)) return;
    uint32_t n_tasks = static_cast<uint32_t>(w >> 24) & 0xffffff;
    uint32_t next = static_cast<uint32_t>(w) & 0xffffff;
    if (next >= n_tasks) return;
    if (!job_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel)) continue;
    // The job cannot finish (nor fn_ change) before this claimed task is done.
    fn_(ctx_, static_cast<int>(next), thread);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    w = job_.load(std::memory_order_acquire);
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
  pending_.store(n_tasks, std::memory_order_relaxed);
  uint32_t gen = gen_.load(std::memory_order_relaxed) + 1;
  job_.store(pack(gen, static_cast<uint32_t>(n_tasks), 0), std::memory_order_release);
  const int64_t t0 = adaptive_ ? now_ns() : 0;
  gen_.store(gen, std::memory_order_release);
  gen_.notify_all();
  work_on(gen, 0);
  const int64_t t1 = adaptive_ ? now_ns() : 0;
  for (int i = 0; i < kSpinIters && pending_.load(std::memory_order_acquire) != 0; ++i) cpu_relax();
  for (;;) {
    int32_t p = pending_.load(std::memory_order_acquire);
    if (p == 0) break;
    pending_.wait(p, std::memory_order_acquire);
  }
  if (adaptive_) {
    const int64_t t2 = now_ns();
    adapt(t2 - t0, t2 - t1);
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
