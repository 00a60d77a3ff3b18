// What route handlers may use: the current configuration, the logger and the daemon's
// services. Handlers get it by reference at registration and stay pure functions of
// (RouteContext, Request); they never touch sockets or block on inference.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "config.h"
#include "core/log.h"
#include "routes/resolve.h"

namespace nurl {

namespace sched {
class Scheduler;
}
class Store;
class JobManager;
class DaemonMetrics;

// Where the daemon is in its life (GET /health answers 503 unless serving).
enum class Phase { starting, serving, stopping };
namespace history {
class History;
}
namespace auth {
class TokenStore;
}

// The live configuration; SIGHUP swaps in a new snapshot, readers keep theirs.
class ConfigHolder {
 public:
  explicit ConfigHolder(Config c) : cfg_(std::make_shared<const Config>(std::move(c))) {}
  std::shared_ptr<const Config> get() const {
    std::lock_guard lk(mu_);
    return cfg_;
  }
  void set(Config c) {
    std::lock_guard lk(mu_);
    cfg_ = std::make_shared<const Config>(std::move(c));
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Config> cfg_;
};

struct RouteContext {
  RouteContext(Logger& l, ConfigHolder& c, sched::Scheduler* s) : log(l), config(c), scheduler(s) {}

  Logger& log;
  ConfigHolder& config;
  sched::Scheduler* scheduler = nullptr;
  Store* store = nullptr;                  // the model store (null when it failed to open)
  JobManager* jobs = nullptr;              // pulls and other jobs (null without a store)
  StoreResolver store_resolve;             // names → models through the store
  std::function<void()> request_shutdown;  // control: stop serving and exit 0
  std::function<Result<void>()> reload_config;  // control: re-read file + environment
  DaemonMetrics* metrics = nullptr;        // GET /metrics (null: 503, metrics are off)
  const std::atomic<Phase>* phase = nullptr;  // GET /health (null: serving)
  history::History* history = nullptr;     // the web chat's conversations (null: web chat off)
  auth::TokenStore* tokens = nullptr;      // bearer tokens (null: none can be made)
};

}  // namespace nurl
