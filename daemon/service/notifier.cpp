#include "service/notifier.h"

#include <systemd/sd-daemon.h>
#include <time.h>

#include <boost/asio/post.hpp>

#include <memory>

namespace nurl::service {

namespace {

std::string monotonic_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::to_string(static_cast<unsigned long long>(ts.tv_sec) * 1000000ull +
                        static_cast<unsigned long long>(ts.tv_nsec) / 1000ull);
}

}  // namespace

ServiceNotifier::Options ServiceNotifier::options_from_environment() {
  Options o;
  uint64_t usec = 0;
  // > 0 when WATCHDOG_USEC is set (and WATCHDOG_PID, if set, is us).
  if (sd_watchdog_enabled(0, &usec) > 0) o.watchdog = std::chrono::microseconds(usec);
  return o;
}

ServiceNotifier::Send ServiceNotifier::sd_notify_sender() {
  return [](const std::string& state) { sd_notify(0, state.c_str()); };
}

ServiceNotifier::ServiceNotifier(boost::asio::io_context& io, Send send, Status status, Options opts, Logger& log)
    : io_(io), send_(std::move(send)), status_(std::move(status)), opts_(opts), log_(log) {}

ServiceNotifier::~ServiceNotifier() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ServiceNotifier::ready() {
  std::string status = status_();
  {
    std::lock_guard lk(mu_);
    last_status_ = status;
  }
  send_("READY=1\nSTATUS=" + status);
  std::lock_guard lk(mu_);
  if (!started_ && !stop_) {
    started_ = true;
    thread_ = std::thread([this] { run(); });
  }
}

void ServiceNotifier::reloading() {
  send_("RELOADING=1\nMONOTONIC_USEC=" + monotonic_usec() + "\nSTATUS=reloading configuration");
}

void ServiceNotifier::stopping() {
  send_("STOPPING=1\nSTATUS=stopping: ending running requests");
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

// Posts a no-op onto the event loop and waits until one of its threads has run it.
bool ServiceNotifier::probe_event_loop(std::chrono::microseconds timeout) {
  struct Probe {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto p = std::make_shared<Probe>();
  boost::asio::post(io_, [p] {
    std::lock_guard lk(p->mu);
    p->done = true;
    p->cv.notify_all();
  });
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lk(p->mu);
  while (!p->done) {
    // Short slices, so that stopping() is noticed while a probe is outstanding.
    auto slice = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
    p->cv.wait_until(lk, slice);
    if (p->done) break;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::lock_guard g(mu_);
    if (stop_) return false;
  }
  return true;
}

void ServiceNotifier::run() {
  using clock = std::chrono::steady_clock;
  const bool watchdog = opts_.watchdog.count() > 0;
  const auto period = std::chrono::duration_cast<clock::duration>(opts_.watchdog / 2);
  auto next_ping = clock::now();
  auto next_status = clock::now() + opts_.status_period;
  bool warned = false;
  while (true) {
    {
      std::unique_lock lk(mu_);
      auto wake = watchdog ? std::min(next_ping, next_status) : next_status;
      cv_.wait_until(lk, wake, [this] { return stop_; });
      if (stop_) return;
    }
    auto now = clock::now();
    if (watchdog && now >= next_ping) {
      if (probe_event_loop(std::chrono::duration_cast<std::chrono::microseconds>(period))) {
        send_("WATCHDOG=1");
        warned = false;
      } else if (!warned) {
        std::lock_guard lk(mu_);
        if (stop_) return;
        log_.error("watchdog: the event loop has not run a handler for " +
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(period).count()) +
                   " ms; not telling systemd we are alive");
        warned = true;
      }
      next_ping = now + period;
    }
    if (now >= next_status) {
      std::string s = status_();
      bool changed;
      {
        std::lock_guard lk(mu_);
        changed = s != last_status_;
        if (changed) last_status_ = s;
      }
      if (changed) send_("STATUS=" + s);
      next_status = now + opts_.status_period;
    }
  }
}

}  // namespace nurl::service
