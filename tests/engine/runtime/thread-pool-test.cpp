// ThreadPool: every task runs exactly once per job, thread indices stay in range, jobs run back
// to back without losing or repeating tasks, and the active thread count can change between jobs.
// Recomputable jobs publish every task exactly once, and a task held by a thread that stalls is
// recomputed by the caller, which returns without waiting for it; the late result is dropped.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "engine/runtime/thread-pool.h"

namespace nurl {
namespace {

TEST(ThreadPool, EveryTaskOnceAcrossManyJobs) {
  ThreadPool pool(3);
  ASSERT_EQ(pool.n_threads(), 3);
  std::vector<std::atomic<int>> hits(1000);
  for (int job = 0; job < 2000; ++job) {
    const int n = 1 + (job * 37) % 1000;
    std::atomic<int> bad_thread{0};
    pool.parallel_for(n, [&](int task, int thread) {
      hits[static_cast<size_t>(task)].fetch_add(1, std::memory_order_relaxed);
      if (thread < 0 || thread >= 3) bad_thread = 1;
    });
    ASSERT_EQ(bad_thread.load(), 0);
    for (int i = 0; i < 1000; ++i) {
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), i < n ? 1 : 0) << "job " << job << " task " << i;
      hits[static_cast<size_t>(i)] = 0;
    }
  }
}

TEST(ThreadPool, ChangingThreadCount) {
  ThreadPool pool(2);
  for (int n_threads : {1, 2, 1, 2}) {
    pool.set_n_threads(n_threads);
    std::atomic<int> sum{0};
    std::atomic<int> max_thread{0};
    pool.parallel_for(500, [&](int task, int thread) {
      sum += task;
      int m = max_thread.load();
      while (thread > m && !max_thread.compare_exchange_weak(m, thread)) {
      }
    });
    EXPECT_EQ(sum.load(), 499 * 500 / 2);
    EXPECT_LT(max_thread.load(), n_threads);
  }
  pool.set_n_threads(99);
  EXPECT_EQ(pool.n_threads(), 2);
}

// A recomputable task: compute() leaves task·3 + job in a thread-local slot; publish() stores it
// in out[task] and counts the publish.
struct Square {
  int task, job;
  int* out;
  std::atomic<int>* published;
  static int& slot() {
    thread_local int v = 0;
    return v;
  }
  void compute() const { slot() = task * 3 + job; }
  void publish() const {
    out[task] = slot();
    published[task].fetch_add(1, std::memory_order_relaxed);
  }
};

TEST(ThreadPool, RecomputableJobsPublishEveryTaskOnce) {
  ThreadPool pool(3);
  std::vector<int> out(1200);
  std::vector<std::atomic<int>> published(1200);
  for (int job = 0; job < 3000; ++job) {
    const int n = 1 + (job * 53) % 1200;  // past 1024 tasks: an ordinary job underneath
    pool.parallel_for_recomputable<Square>(n, [&](int task) { return Square{task, job, out.data(), published.data()}; });
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(published[static_cast<size_t>(i)].load(), 1) << "job " << job << " task " << i;
      ASSERT_EQ(out[static_cast<size_t>(i)], i * 3 + job) << "job " << job << " task " << i;
      published[static_cast<size_t>(i)] = 0;
    }
  }
}

// The first task a worker (not the caller) computes blocks until the test releases it, as a
// thread whose core was taken would; the caller's tasks take a little time so the worker gets one.
struct Stalling {
  int task;
  std::thread::id caller;
  std::atomic<bool>* stall_taken;
  std::atomic<bool>* release;
  std::atomic<bool>* late_done;
  int* out;
  std::atomic<int>* published;
  void compute() const {
    Square::slot() = task + 1;
    if (std::this_thread::get_id() == caller) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    } else if (!stall_taken->exchange(true)) {
      for (int i = 0; i < 20000 && !release->load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      late_done->store(true);
    }
  }
  void publish() const {
    out[task] = Square::slot();
    published[task].fetch_add(1);
  }
};

TEST(ThreadPool, RecomputableJobDoesNotWaitForAStalledThread) {
  ThreadPool pool(2);
  constexpr int n = 16;
  std::vector<int> out(n);
  std::vector<std::atomic<int>> published(n);
  std::atomic<bool> stall_taken{false}, release{false}, late_done{false};
  // The worker may not wake before the caller has claimed every task; try a few jobs.
  const std::thread::id caller = std::this_thread::get_id();
  for (int attempt = 0; attempt < 20 && !stall_taken.load(); ++attempt) {
    for (auto& p : published) p = 0;
    pool.parallel_for_recomputable<Stalling>(n, [&](int task) {
      return Stalling{task, caller, &stall_taken, &release, &late_done, out.data(), published.data()};
    });
  }
  ASSERT_TRUE(stall_taken.load()) << "the worker never took a task";
  EXPECT_FALSE(late_done.load()) << "the caller waited for the stalled worker";
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(published[static_cast<size_t>(i)].load(), 1) << i;
    EXPECT_EQ(out[static_cast<size_t>(i)], i + 1) << i;
  }
  // Released, the late worker finishes its copy and drops it; later jobs run normally.
  release = true;
  while (!late_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<int> out2(100);
  std::vector<std::atomic<int>> published2(100);
  for (int job = 0; job < 50; ++job) {
    pool.parallel_for_recomputable<Square>(100, [&](int task) { return Square{task, job, out2.data(), published2.data()}; });
    for (int i = 0; i < 100; ++i) {
      ASSERT_EQ(published2[static_cast<size_t>(i)].exchange(0), 1) << "job " << job << " task " << i;
      ASSERT_EQ(out2[static_cast<size_t>(i)], i * 3 + job);
    }
  }
  for (int i = 0; i < n; ++i) EXPECT_EQ(published[static_cast<size_t>(i)].load(), 1) << "late publish of " << i;
}

}  // namespace
}  // namespace nurl
