// Channel<T>: the bounded hand-off from a model worker (a plain thread) to the I/O coroutine
// that streams a response. The producer blocks while the channel is full (backpressure from a
// slow reader) and learns through push() == false that the consumer went away. The consumer
// awaits items without blocking its executor.
//
// Wake-up invariant: pop() must run on a strand (each connection's coroutine does). It parks a
// timer and registers a waker while holding the lock; the waker posts timer.cancel() to that
// same strand, which cannot run before the coroutine has suspended on the timer, so a wake-up
// is never lost.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

namespace nurl::sched {

template <class T>
class Channel {
 public:
  explicit Channel(size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // Producer. Blocks while full; false (and the item dropped) once the consumer cancelled.
  bool push(T v) {
    std::function<void()> wake;
    {
      std::unique_lock lk(mu_);
      not_full_.wait(lk, [&] { return cancelled_ || q_.size() < capacity_; });
      if (cancelled_) return false;
      q_.push_back(std::move(v));
      wake = std::exchange(waker_, nullptr);
    }
    wait_cv_.notify_all();
    if (wake) wake();
    return true;
  }

  // Producer: no more items; the consumer drains what is queued, then pop() yields nullopt.
  void close() {
    std::function<void()> wake;
    {
      std::lock_guard lk(mu_);
      closed_ = true;
      wake = std::exchange(waker_, nullptr);
    }
    wait_cv_.notify_all();
    if (wake) wake();
  }

  // Consumer: stop. Wakes a blocked producer (push returns false) and a parked pop().
  void cancel() {
    std::function<void()> wake;
    {
      std::lock_guard lk(mu_);
      cancelled_ = true;
      q_.clear();
      wake = std::exchange(waker_, nullptr);
    }
    not_full_.notify_all();
    wait_cv_.notify_all();
    if (wake) wake();
  }

  bool cancelled() const {
    std::lock_guard lk(mu_);
    return cancelled_;
  }

  // Consumer, on a strand: the next item; nullopt when closed and drained, or cancelled.
  boost::asio::awaitable<std::optional<T>> pop() {
    auto ex = co_await boost::asio::this_coro::executor;
    while (true) {
      auto timer = std::make_shared<boost::asio::steady_timer>(ex, boost::asio::steady_timer::time_point::max());
      {
        std::lock_guard lk(mu_);
        if (cancelled_) co_return std::nullopt;
        if (!q_.empty()) {
          T v = std::move(q_.front());
          q_.pop_front();
          not_full_.notify_one();
          co_return v;
        }
        if (closed_) co_return std::nullopt;
        waker_ = [ex, timer] { boost::asio::post(ex, [timer] { timer->cancel(); }); };
      }
      boost::system::error_code ec;
      co_await timer->async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    }
  }

  // Blocking pop for tests and non-I/O consumers.
  std::optional<T> pop_blocking() {
    std::unique_lock lk(mu_);
    wait_cv_.wait(lk, [&] { return cancelled_ || closed_ || !q_.empty(); });
    if (cancelled_ || q_.empty()) return std::nullopt;
    T v = std::move(q_.front());
    q_.pop_front();
    not_full_.notify_one();
    return v;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable not_full_;
  std::condition_variable wait_cv_;
  std::deque<T> q_;
  size_t capacity_;
  bool closed_ = false;
  bool cancelled_ = false;
  std::function<void()> waker_;
};

}  // namespace nurl::sched
