// OffThread (see off-thread.h).
#include "routes/off-thread.h"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>

namespace nurl {

namespace asio = boost::asio;

OffThread::OffThread() : thread_([this] { loop(); }) {}

OffThread::~OffThread() {
  {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return !busy_; });
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void OffThread::loop() {
  std::unique_lock lk(mu_);
  while (true) {
    cv_.wait(lk, [&] { return stopping_ || task_; });
    if (!task_) return;  // stopping with nothing to do
    auto task = std::move(task_);
    task_ = nullptr;
    lk.unlock();
    task();
    lk.lock();
    busy_ = false;
    auto wake = std::exchange(waker_, nullptr);
    cv_.notify_all();
    if (wake) {
      lk.unlock();
      wake();
      lk.lock();
    }
  }
}

void OffThread::start(std::function<void()> task) {
  {
    std::lock_guard lk(mu_);
    busy_ = true;
    task_ = std::move(task);
  }
  cv_.notify_all();
}

asio::awaitable<void> OffThread::wait() {
  auto ex = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(ex, asio::steady_timer::time_point::max());
  {
    std::lock_guard lk(mu_);
    if (!busy_) co_return;
    waker_ = [ex, timer] { asio::post(ex, [timer] { timer->cancel(); }); };
  }
  boost::system::error_code ec;
  co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace nurl
