// ThreadPool: a small fork-join pool for the forward pass. parallel_for(n, fn) runs fn(i) for
// i in [0, n) on the caller plus the workers and returns when all are done. Tasks are claimed
// one at a time from a shared counter, so a thread that loses its core to another process
// simply claims fewer tasks instead of stalling everyone (no static split, no long spin):
// idle workers spin briefly, then block on a futex (std::atomic::wait).
// Adaptive mode: when the caller waits for a worker that holds a claimed task (that worker's
// core is taken by another process), the pool drops one thread for a while and then probes
// again, with an exponential back-off while the contention lasts (see adapt()).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace nurl {

class ThreadPool {
 public:
  // n_threads counts the caller; n_threads - 1 workers are started. 0: all usable cores.
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return n_active_; }
  int max_threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Threads taking part in later jobs (1..max_threads()); also the ceiling for adaptive mode.
  void set_n_threads(int n);
  void set_adaptive(bool on) { adaptive_ = on; }
  int target_threads() const { return n_target_; }

  // fn(task, thread_index) for task in [0, n_tasks). thread_index < n_threads() (per-thread scratch).
  template <typename F>
  void parallel_for(int n_tasks, F&& fn) {
    run(n_tasks, [](void* ctx, int task, int thread) { (*static_cast<F*>(ctx))(task, thread); }, &fn);
  }

 private:
  using TaskFn = void (*)(void* ctx, int task, int thread);
  void run(int n_tasks, TaskFn fn, void* ctx);
  void worker_main(int index);
  // Claims and runs tasks of job `gen` until none is left.
  void work_on(uint32_t gen, int thread);
  void adapt(int64_t total_ns, int64_t wait_ns);
  void apply_active(int n);

  std::vector<std::thread> workers_;
  int n_active_ = 1;
  int n_target_ = 1;
  // Adaptive state (caller thread only).
  bool adaptive_ = false;
  int64_t win_total_ns_ = 0, win_wait_ns_ = 0;
  int win_jobs_ = 0;
  int win_long_waits_ = 0;
  bool probing_ = false;
  int64_t reduced_jobs_left_ = 0;  // > 0: running with fewer threads for this many more jobs
  int strikes_ = 0;
  // Job word: generation (16 bits) | n_tasks (24 bits) | next task (24 bits); claimed with CAS so
  // a worker that wakes late can never take a task of a newer job by mistake.
  std::atomic<uint64_t> job_{0};
  std::atomic<uint32_t> gen_{0};       // bumped per job; workers wait on it
  std::atomic<int32_t> pending_{0};    // tasks not finished yet; the caller waits on it
  std::atomic<int32_t> n_joined_{0};   // workers allowed to take part (n_active_ - 1)
  std::atomic<bool> stop_{false};
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace nurl
