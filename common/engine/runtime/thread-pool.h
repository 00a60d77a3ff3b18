// ThreadPool: a small fork-join pool for the forward pass. parallel_for(n, fn) runs fn(i) for
// i in [0, n) on the caller plus the workers and returns when all are done. Tasks are claimed
// one at a time from a shared counter, so a thread that loses its core to another process
// simply claims fewer tasks instead of stalling everyone (no static split, no long spin):
// idle workers spin briefly, then block on a futex (std::atomic::wait).
// Adaptive mode: when the caller waits for a worker that holds a claimed task (that worker's
// core is taken by another process), the pool drops one thread for a while and then probes
// again, with an exponential back-off while the contention lasts (see adapt()).
// Recomputable jobs (parallel_for_recomputable) go further: a task held by a thread that lost its
// core is computed again by the caller instead of waited for (a scheduler time slice, ~3 ms).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>
#include <type_traits>
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

  // For tasks whose only effect is their publish(). prepare(task) returns a Desc holding
  // everything task `task` needs (it reads the caller's frame, so it runs only while this call is
  // in progress); desc.compute() works from the Desc and thread-local memory alone; then
  // desc.publish() writes the result — once per task, by whichever thread computed it first. When
  // the caller has run out of tasks and another thread still holds one well past a task's time
  // (its core was taken), the caller computes and publishes that task itself and returns; the
  // late thread finishes its copy later, on possibly stale inputs, and drops it. So compute()
  // must stay harmless after this call returned: read only memory that outlives the pool (the
  // model, the context's buffers) and write only thread-local memory.
  template <class Desc, class Prepare>
  void parallel_for_recomputable(int n_tasks, Prepare&& prepare) {
    static_assert(std::is_trivially_copyable_v<Desc> && sizeof(Desc) <= kMaxDesc && alignof(Desc) <= 64);
    using P = std::remove_reference_t<Prepare>;
    static constexpr RecomputeOps ops{
        [](void* ctx, int task, void* desc) { new (desc) Desc((*static_cast<P*>(ctx))(task)); },
        [](const void* desc) { static_cast<const Desc*>(desc)->compute(); },
        [](const void* desc) { static_cast<const Desc*>(desc)->publish(); }};
    if (n_tasks > kMaxRecomputableTasks) {  // more tasks than publish marks: an ordinary job
      parallel_for(n_tasks, [&](int task, int) {
        const Desc d = prepare(task);
        d.compute();
        d.publish();
      });
      return;
    }
    run_recomputable(n_tasks, &ops, const_cast<void*>(static_cast<const void*>(&prepare)));
  }

 private:
  using TaskFn = void (*)(void* ctx, int task, int thread);
  static constexpr size_t kMaxDesc = 192;
  static constexpr int kMaxRecomputableTasks = 1024;
  struct RecomputeOps {
    void (*prepare)(void* ctx, int task, void* desc);
    void (*compute)(const void* desc);
    void (*publish)(const void* desc);
  };
  struct alignas(64) WorkerSlot {
    std::atomic<uint32_t> in_prologue{0};  // between trying a claim and having copied what it needs
  };
  void run(int n_tasks, TaskFn fn, void* ctx);
  void run_recomputable(int n_tasks, const RecomputeOps* ops, void* ctx);
  // Runs task `task` of the recomputable job `gen` from desc, publishing it unless another thread
  // did first; true when this call published it.
  bool compute_and_publish(const RecomputeOps& ops, const void* desc, int task, uint32_t gen);
  void worker_main(int index);
  // Claims and runs tasks of job `gen` until none is left; returns how many this thread ran.
  int work_on(uint32_t gen, int thread);
  void wait_pending();
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
  const RecomputeOps* ops_ = nullptr;  // set: the current job is recomputable
  // Recomputable jobs: per task, the generation of the job that last published it.
  std::unique_ptr<std::atomic<uint32_t>[]> published_;
  std::unique_ptr<WorkerSlot[]> slots_;  // per thread (index 0: the caller, unused)
};

}  // namespace nurl
