// ServiceNotifier: what the service manager hears from nurllamad (systemd Type=notify, through
// sd_notify(3)): READY=1 once every listener accepts, STATUS= lines ("listening on …; 1 model
// resident; 0 queued"), RELOADING=1 with MONOTONIC_USEC before a reload and READY=1 after it,
// STOPPING=1, and — when the manager asks for it with WATCHDOG_USEC — WATCHDOG=1 every half
// period, each sent only after a probe posted onto the io_context has run (a stuck event loop
// stops the pings and systemd restarts the service). Without NOTIFY_SOCKET nothing is sent.
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/log.h"

namespace nurl::service {

class ServiceNotifier {
 public:
  using Send = std::function<void(const std::string& state)>;  // one sd_notify datagram
  using Status = std::function<std::string()>;                 // the text of STATUS=

  struct Options {
    std::chrono::microseconds watchdog{0};                 // 0: no watchdog
    std::chrono::milliseconds status_period{2000};         // how often STATUS= is refreshed
  };

  // For the real service: sd_notify, and the watchdog period from sd_watchdog_enabled().
  static Options options_from_environment();
  static Send sd_notify_sender();

  ServiceNotifier(boost::asio::io_context& io, Send send, Status status, Options opts, Logger& log);
  ~ServiceNotifier();
  ServiceNotifier(const ServiceNotifier&) = delete;
  ServiceNotifier& operator=(const ServiceNotifier&) = delete;

  // READY=1 with the current STATUS=; starts the status/watchdog thread on first call.
  void ready();
  void reloading();  // RELOADING=1, MONOTONIC_USEC=<now>, STATUS=reloading configuration
  void stopping();   // STOPPING=1; ends the thread (systemd stops the watchdog while stopping)

 private:
  void run();
  bool probe_event_loop(std::chrono::microseconds timeout);

  boost::asio::io_context& io_;
  Send send_;
  Status status_;
  Options opts_;
  Logger& log_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;
  bool stop_ = false;
  std::string last_status_;
  std::thread thread_;
};

}  // namespace nurl::service
