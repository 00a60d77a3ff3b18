#include "daemon.h"

#include <grp.h>
#include <pwd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <thread>
#include <vector>

#include "api/version.h"
#include "http/server.h"
#include "routes/routes.h"
#include "scheduler/scheduler.h"
#include "scheduler/engine-loader.h"
#include "store/store.h"
#include "jobs/job-manager.h"

namespace nurl {

namespace {

// Same user, root, or a member of the service group may use the control socket.
bool peer_allowed(int uid, int gid, const std::string& group_name) {
  if (uid == static_cast<int>(::geteuid()) || uid == 0) return true;
  if (group_name.empty()) return false;
  std::vector<char> buf(16384);
  struct group gr{};
  struct group* grp = nullptr;
  if (::getgrnam_r(group_name.c_str(), &gr, buf.data(), buf.size(), &grp) != 0 || !grp) return false;
  if (static_cast<gid_t>(gid) == grp->gr_gid) return true;
  struct passwd pw{};
  struct passwd* pwp = nullptr;
  std::vector<char> pbuf(16384);
  if (::getpwuid_r(static_cast<uid_t>(uid), &pw, pbuf.data(), pbuf.size(), &pwp) != 0 || !pwp) return false;
  for (char** m = grp->gr_mem; m && *m; ++m)
    if (std::string(*m) == pwp->pw_name) return true;
  return false;
}

std::string machine_hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

http::Policy make_policy(const Config& c) {
  http::Policy p;
  p.check_host = http::is_loopback_host(c.host.host);
  p.machine_hostname = machine_hostname();
  p.origins = http::cors_allowed_origins(c.origins);
  return p;
}

sched::SchedulerConfig scheduler_config(const Config& c) {
  sched::SchedulerConfig s;
  s.max_loaded_models = c.max_loaded_models;
  s.num_parallel = c.num_parallel;
  s.max_queue = c.max_queue;
  s.memory_budget = c.memory_budget ? c.memory_budget : sched::default_memory_budget();
  s.default_keep_alive = c.keep_alive;
  return s;
}

}  // namespace

int run_daemon(ConfigSources sources, Logger& log) {
  auto cfg = load_config(sources);
  if (!cfg.ok()) {
    log.error("config: " + cfg.error().msg);
    return 2;
  }
  log.set_level(cfg->log_level);
  ConfigHolder config(*cfg);
  log.info(std::string("nurllamad ") + version_string() + " starting" +
           (cfg->config_file.empty() ? "" : " (config " + cfg->config_file + ")"));

  boost::asio::io_context io;
  sched::Scheduler scheduler(scheduler_config(*cfg), sched::engine_loader(), log);

  std::unique_ptr<Store> store;
  if (auto st = Store::open(StoreLayout{cfg->state_dir, cfg->models_dir}); st.ok()) {
    store = std::move(*st);
  } else {
    log.error("store: " + st.error().msg + " (only model paths can be served)");
  }

  // Jobs (pulls) resume from <state>/jobs; declared after the store so they stop first.
  std::unique_ptr<JobManager> jobs;
  if (store) {
    JobsConfig jc;
    jc.workers = cfg->job_workers;
    jc.threads = cfg->job_threads;
    jobs = std::make_unique<JobManager>(*store, PullConfig::from_env([](const char* k) { return std::getenv(k); }), log,
                                        jc);
    if (auto r = jobs->restore(); !r.ok()) log.warn("jobs: " + r.error().msg);
  }

  http::Router router;
  RouteContext ctx{log, config, &scheduler};
  ctx.store = store.get();
  ctx.jobs = jobs.get();
  if (store) ctx.store_resolve = store_resolver(*store);
  http::ServerLimits limits;
  limits.max_body_bytes = cfg->max_body_bytes;
  limits.max_connections = static_cast<size_t>(cfg->max_connections);
  http::Server server(io, router, limits, log);

  boost::asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  bool stopping = false;
  auto stop = [&] {
    boost::asio::post(io, [&] {
      if (stopping) return;
      stopping = true;
      log.info("stopping: no new connections; ending running streams");
      if (sources.under_systemd) sd_notify(0, "STOPPING=1");
      boost::system::error_code ec;
      signals.cancel(ec);
      server.stop();
      // Running streams end through their cancelled sources; the scheduler stops after io.run().
    });
  };
  auto reload = [&]() -> Result<void> {
    auto fresh = load_config(sources);
    if (!fresh.ok()) {
      log.error("config reload: " + fresh.error().msg + " (keeping the old config)");
      return fresh.error();
    }
    log.set_level(fresh->log_level);
    server.set_policy(make_policy(*fresh));
    scheduler.reconfigure(scheduler_config(*fresh));
    config.set(*fresh);
    log.info("config reloaded");
    return ok();
  };
  ctx.request_shutdown = stop;
  ctx.reload_config = reload;
  add_all_routes(router, ctx);
  server.set_policy(make_policy(*cfg));

  if (auto r = server.listen_tcp(cfg->host); !r.ok()) {
    log.error(r.error().msg);
    return 1;
  }
  if (!cfg->socket_path.empty()) {
    const std::string group = cfg->service_group;
    if (auto r = server.listen_unix(cfg->socket_path, [group](int uid, int gid) { return peer_allowed(uid, gid, group); });
        !r.ok()) {
      log.warn(r.error().msg + " (the control socket is off; TCP still serves)");
    }
  }

  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                              int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      log.info("SIGHUP: reloading config");
      (void)reload();
      signals.async_wait(on_signal);
      return;
    }
    log.info(sig == SIGTERM ? "SIGTERM received" : "SIGINT received");
    stop();
  };
  signals.async_wait(on_signal);
  ::signal(SIGPIPE, SIG_IGN);

  if (sources.under_systemd) sd_notify(0, "READY=1");
  log.info("ready");

  const unsigned n_threads = std::max(2u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < n_threads; ++i) pool.emplace_back([&] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  scheduler.stop();
  log.info("stopped");
  return 0;
}

}  // namespace nurl
