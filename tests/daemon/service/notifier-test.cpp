// ServiceNotifier against a fake service manager: what it sends, and that the watchdog pings
// only while the event loop runs handlers (the probe), not on a timer alone.
#include "service/notifier.h"

#include <gtest/gtest.h>
#include <time.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <future>

namespace nurl::service {
namespace {

using namespace std::chrono_literals;

struct Manager {  // what systemd would receive
  std::mutex mu;
  std::vector<std::string> msgs;
  ServiceNotifier::Send sender() {
    return [this](const std::string& s) {
      std::lock_guard lk(mu);
      msgs.push_back(s);
    };
  }
  int count(const std::string& needle) {
    std::lock_guard lk(mu);
    int n = 0;
    for (const auto& m : msgs) n += m.find(needle) != std::string::npos;
    return n;
  }
  std::vector<std::string> all() {
    std::lock_guard lk(mu);
    return msgs;
  }
};

struct Loop {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{io.get_executor()};
  std::thread t{[this] { io.run(); }};
  ~Loop() {
    work.reset();
    io.stop();
    t.join();
  }
};

Logger quiet() { return Logger([](LogLevel, std::string_view) {}, LogLevel::error); }

TEST(ServiceNotifier, ReadyCarriesStatusAndStatusFollowsChanges) {
  Loop loop;
  Manager m;
  std::atomic<int> queued{0};
  Logger log = quiet();
  ServiceNotifier::Options o;
  o.status_period = 20ms;
  ServiceNotifier n(loop.io, m.sender(), [&] { return std::to_string(queued.load()) + " queued"; }, o, log);
  n.ready();
  EXPECT_EQ(m.all().front(), "READY=1\nSTATUS=0 queued");
  queued = 3;
  for (int i = 0; i < 200 && m.count("STATUS=3 queued") == 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(m.count("STATUS=3 queued"), 1);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(m.count("STATUS=3 queued"), 1) << "an unchanged status is not sent again";
  EXPECT_EQ(m.count("WATCHDOG"), 0) << "no watchdog was asked for";
}

TEST(ServiceNotifier, ReloadingHasMonotonicTimeThenReadyAgain) {
  Loop loop;
  Manager m;
  Logger log = quiet();
  ServiceNotifier n(loop.io, m.sender(), [] { return "s"; }, {}, log);
  n.ready();
  timespec a{}, b{};
  clock_gettime(CLOCK_MONOTONIC, &a);
  n.reloading();
  clock_gettime(CLOCK_MONOTONIC, &b);
  n.ready();
  auto msgs = m.all();
  ASSERT_EQ(msgs.size(), 3u);
  ASSERT_EQ(msgs[1].rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0u) << msgs[1];
  const unsigned long long usec = std::stoull(msgs[1].substr(msgs[1].find('=', 12) + 1));
  EXPECT_GE(usec, a.tv_sec * 1000000ull + a.tv_nsec / 1000);
  EXPECT_LE(usec, b.tv_sec * 1000000ull + b.tv_nsec / 1000);
  EXPECT_EQ(msgs[2].rfind("READY=1", 0), 0u);
}

TEST(ServiceNotifier, WatchdogPingsOnlyWhileTheEventLoopRuns) {
  Loop loop;
  Manager m;
  std::atomic<int> errors{0};
  Logger log([&](LogLevel l, std::string_view) { errors += l == LogLevel::error; });
  ServiceNotifier::Options o;
  o.watchdog = 200ms;  // pings every 100 ms
  ServiceNotifier n(loop.io, m.sender(), [] { return "s"; }, o, log);
  n.ready();
  for (int i = 0; i < 200 && m.count("WATCHDOG=1") < 3; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_GE(m.count("WATCHDOG=1"), 3);

  // Wedge the loop's only thread: the probes cannot run, so the pings must stop.
  std::promise<void> release;
  std::promise<void> entered;
  boost::asio::post(loop.io, [&] {
    entered.set_value();
    release.get_future().wait();
  });
  entered.get_future().wait();
  std::this_thread::sleep_for(150ms);  // a probe may have been answered just before
  const int before = m.count("WATCHDOG=1");
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(m.count("WATCHDOG=1"), before) << "pinged while the event loop was stuck";
  EXPECT_GE(errors.load(), 1) << "a stuck loop is logged as an error";

  release.set_value();
  for (int i = 0; i < 200 && m.count("WATCHDOG=1") == before; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_GT(m.count("WATCHDOG=1"), before) << "pings resume once the loop runs again";

  n.stopping();
  std::this_thread::sleep_for(50ms);
  const int at_stop = m.count("WATCHDOG=1");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(m.count("WATCHDOG=1"), at_stop) << "no pings after STOPPING=1";
  EXPECT_EQ(m.count("STOPPING=1"), 1);
}

}  // namespace
}  // namespace nurl::service
