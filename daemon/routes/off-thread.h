// OffThread: one worker thread for the blocking steps of a reply (an upload's disk writes and
// fsync), so the I/O threads never wait on the disk. One task at a time: start() it, keep doing
// async work (reading the next chunk from the socket), then co_await wait() for it to return.
// The wake-up is a post that cancels a timer on the awaiting coroutine's executor (the scheme of
// job-stream.cpp), registered under the lock so it cannot be lost.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace nurl {

class OffThread {
 public:
  OffThread();
  // Waits for a running task, then joins the thread.
  ~OffThread();
  OffThread(const OffThread&) = delete;
  OffThread& operator=(const OffThread&) = delete;

  // Runs `task` on the worker. The previous task must have been waited for.
  void start(std::function<void()> task);
  // Completes once the started task has returned (at once when none runs).
  boost::asio::awaitable<void> wait();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool busy_ = false;
  bool stopping_ = false;
  std::function<void()> waker_;
  std::thread thread_;
};

}  // namespace nurl
