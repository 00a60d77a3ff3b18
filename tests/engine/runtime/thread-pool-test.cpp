// ThreadPool: every task runs exactly once per job, thread indices stay in range, jobs run back
// to back without losing or repeating tasks, and the active thread count can change between jobs.
#include <gtest/gtest.h>

#include <atomic>
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

}  // namespace
}  // namespace nurl
