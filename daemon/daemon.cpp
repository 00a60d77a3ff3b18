#include "daemon.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "api/service-paths.h"
#include "api/version.h"
#include "auth/token-store.h"
#include "history/history.h"
#include "http/server.h"
#include "kernels/cuda-plugin.h"
#include "routes/routes.h"
#include "scheduler/scheduler.h"
#include "scheduler/engine-loader.h"
#include "service/journal.h"
#include "service/listen-fds.h"
#include "service/notifier.h"
#include "store/store.h"
#include "jobs/job-manager.h"
#include "metrics/daemon-metrics.h"

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

http::Policy make_policy(const Config& c, auth::TokenStore* tokens) {
  http::Policy p;
  p.check_host = http::is_loopback_host(c.host.host);
  p.machine_hostname = machine_hostname();
  p.origins = http::cors_allowed_origins(c.origins);
  p.require_tokens = c.access_tokens;
  if (tokens)
    p.verify_token = [tokens](std::string_view t) -> std::optional<http::TokenIdentity> {
      auto id = tokens->verify(t);
      if (!id) return std::nullopt;
      return http::TokenIdentity{id->name, id->scope == auth::Scope::admin};
    };
  return p;
}

sched::SchedulerConfig scheduler_config(const Config& c) {
  sched::SchedulerConfig s;
  s.max_loaded_models = c.max_loaded_models;
  s.num_parallel = c.num_parallel;
  s.max_queue = c.max_queue;
  s.memory_budget = c.memory_budget ? c.memory_budget : sched::default_memory_budget();
  s.default_keep_alive = c.keep_alive;
  s.user_max_generations = c.user_max_generations;
  return s;
}

// Where the log goes: the journal (structured entries) when stderr is the journal; otherwise
// stderr plus a bounded log file that `nurllama logs` reads.
void choose_log_sink(const Config& c, Logger& log) {
  if (stderr_is_journal()) {
    log.set_sink(service::journal_sink());
    return;
  }
  if (c.log_file == "none") return;
  const std::string path = c.log_file.empty() ? default_log_file(c.state_dir) : c.log_file;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::string err;
  auto file = RotatingFile::open(path, 8ull << 20, &err);
  if (!file) {
    log.warn(err + " (logging to stderr only)");
    return;
  }
  log.set_sink(stderr_sink(std::move(file)));
}

// "listening on 127.0.0.1:11434, unix:/run/nurllama/nurllamad.sock; 1 model resident; 0 queued"
std::string service_status(const http::Server& server, const sched::Scheduler& scheduler,
                           const std::string& reload_error) {
  std::string s = "listening on ";
  auto where = server.listening();
  for (size_t i = 0; i < where.size(); ++i) s += (i ? ", " : "") + where[i];
  const size_t n = scheduler.resident().size();
  s += "; " + std::to_string(n) + (n == 1 ? " model" : " models") + " resident; " +
       std::to_string(scheduler.waiting()) + " queued";
  if (!reload_error.empty()) s += "; last config reload failed: " + reload_error;
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
  choose_log_sink(*cfg, log);
  ConfigHolder config(*cfg);
  log.info(std::string("nurllamad ") + version_string() + " starting" +
           (cfg->config_file.empty() ? "" : " (config " + cfg->config_file + ")"));

  if (auto cuda = load_cuda_plugin(); cuda.ok()) log.info(describe(*cuda));
  else log.info(cuda.error().msg);

  boost::asio::io_context io;
  std::atomic<Phase> phase{Phase::starting};
  DaemonMetrics metrics;
  LoadOptions load_opts;
  load_opts.max_tier = cfg->cpu_tier;
  sched::Scheduler scheduler(scheduler_config(*cfg), sched::engine_loader(load_opts), log, &metrics);

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
    PullConfig pc = PullConfig::from_env([](const char* k) { return std::getenv(k); });
    pc.on_bytes = [&metrics](uint64_t n) { metrics.pull_bytes(n); };
    jobs = std::make_unique<JobManager>(*store, std::move(pc), log, jc);
    if (auto r = jobs->restore(); !r.ok()) log.warn("jobs: " + r.error().msg);
  }

  // The web chat's history and the bearer tokens live in the state directory.
  std::unique_ptr<history::History> history;
  if (auto h = history::History::open(cfg->state_dir + "/history.db"); h.ok()) history = std::move(*h);
  else log.error("web chat history: " + h.error().msg + " (the web chat is off)");
  std::unique_ptr<auth::TokenStore> tokens;
  if (auto t = auth::TokenStore::open(cfg->state_dir + "/tokens.json"); t.ok()) tokens = std::move(*t);
  else log.error("tokens: " + t.error().msg);
  if (cfg->access_tokens && (!tokens || tokens->empty()))
    log.warn("access is \"tokens\" but no token exists yet: create one with `nurllama token create NAME`");

  http::Router router;
  RouteContext ctx{log, config, &scheduler};
  ctx.history = history.get();
  ctx.tokens = tokens.get();
  ctx.store = store.get();
  ctx.jobs = jobs.get();
  ctx.metrics = &metrics;
  ctx.phase = &phase;
  if (store) ctx.store_resolve = store_resolver(*store);
  http::ServerLimits limits;
  limits.max_body_bytes = cfg->max_body_bytes;
  limits.max_connections = static_cast<size_t>(cfg->max_connections);
  limits.max_connections_per_peer = static_cast<size_t>(cfg->max_connections_per_peer);
  limits.header_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(cfg->header_timeout);
  http::Server server(io, router, limits, log, [&metrics](const http::Request& req, int status, std::chrono::nanoseconds took) {
    metrics.request(req.route, req.method, status, took);
  });

  std::mutex reload_mu;
  std::string reload_error;  // the last failed reload's message, shown in STATUS=
  service::ServiceNotifier notifier(
      io, service::ServiceNotifier::sd_notify_sender(),
      [&] {
        std::lock_guard lk(reload_mu);
        return service_status(server, scheduler, reload_error);
      },
      service::ServiceNotifier::options_from_environment(), log);

  boost::asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  bool stopping = false;
  auto stop = [&] {
    boost::asio::post(io, [&] {
      if (stopping) return;
      stopping = true;
      phase = Phase::stopping;
      log.info("stopping: no new connections; ending running streams");
      notifier.stopping();
      boost::system::error_code ec;
      signals.cancel(ec);
      server.stop();
      // Running streams end through their cancelled sources; the scheduler stops after io.run().
    });
  };
  auto reload = [&]() -> Result<void> {
    notifier.reloading();
    auto fresh = load_config(sources);
    {
      std::lock_guard lk(reload_mu);
      reload_error = fresh.ok() ? "" : fresh.error().msg;
    }
    if (!fresh.ok()) {
      log.error("config reload: " + fresh.error().msg + " (keeping the old config)");
      notifier.ready();
      return fresh.error();
    }
    log.set_level(fresh->log_level);
    if (tokens) {
      if (auto r = tokens->reload(); !r.ok()) log.warn("tokens: " + r.error().msg + " (keeping the old tokens)");
    }
    if (fresh->host.host != cfg->host.host || fresh->host.port != cfg->host.port)
      log.warn("config reload: the listen address changed; restart nurllamad to listen there");
    server.set_policy(make_policy(*fresh, tokens.get()));
    scheduler.reconfigure(scheduler_config(*fresh));
    config.set(*fresh);
    log.info("config reloaded");
    notifier.ready();
    return ok();
  };
  ctx.request_shutdown = stop;
  ctx.reload_config = reload;
  add_all_routes(router, ctx);
  server.set_policy(make_policy(*cfg, tokens.get()));

  // Listeners passed by nurllamad.socket are served as they are; the rest are bound here.
  auto inherited = service::take_listen_fds();
  if (!inherited.ok()) {
    log.error(inherited.error().msg);
    return 1;
  }
  if (!inherited->http.empty() || !inherited->control.empty())
    log.info("socket activation: " + std::to_string(inherited->http.size()) + " API and " +
             std::to_string(inherited->control.size()) + " control socket(s) inherited");
  for (int fd : inherited->http)
    if (auto r = server.adopt_tcp(fd); !r.ok()) {
      log.error(r.error().msg);
      return 1;
    }
  if (inherited->http.empty()) {
    if (auto r = server.listen_tcp(cfg->host); !r.ok()) {
      log.error(r.error().msg);
      return 1;
    }
  }
  const std::string group = cfg->service_group;
  auto auth = [group](int uid, int gid) { return peer_allowed(uid, gid, group); };
  for (int fd : inherited->control)
    if (auto r = server.adopt_unix(fd, auth); !r.ok()) log.warn(r.error().msg + " (the control socket is off)");
  if (inherited->control.empty() && !cfg->socket_path.empty()) {
    if (auto r = server.listen_unix(cfg->socket_path, auth); !r.ok()) {
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

  // Every listener is bound and listening (connections queue in the kernel until accepted); the
  // accept loops were spawned before this handler, so it runs once they are.
  boost::asio::post(io, [&] {
    Phase was = Phase::starting;
    phase.compare_exchange_strong(was, Phase::serving);  // unless a stop came first
    notifier.ready();
    log.info("ready");
  });

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
