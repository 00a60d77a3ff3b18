// Every knob of nurllamad in one place. Sources, lowest precedence first: built-in defaults,
// the config file (`key = value` lines, '#' comments), the environment (NURLLAMA_*, with the
// OLLAMA_* names accepted as aliases), command-line flags. load_config() is pure: the caller
// passes the environment and flags in, so tests need no process state.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/duration.h"
#include "core/error.h"
#include "core/log.h"
#include "http/security.h"
#include "kernels/cpu/cpu-features.h"

namespace nurl {

struct Config {
  http::HostPort host;                    // host: NURLLAMA_HOST / OLLAMA_HOST
  std::string socket_path;                // socket: the Unix control socket ("" = off)
  std::string models_dir;                 // models: NURLLAMA_MODELS / OLLAMA_MODELS
  std::string state_dir;                  // state: jobs, history (NURLLAMA_STATE_DIR)
  Nanos keep_alive = std::chrono::minutes(5);  // keep_alive; negative = forever
  int max_loaded_models = 3;              // max_loaded_models
  int num_parallel = 4;                   // num_parallel: sequences batched per model
  int max_queue = 512;                    // max_queue: waiting requests before 503
  int context_length = 4096;              // context_length: default num_ctx
  std::vector<std::string> origins;       // origins: extra CORS origins (comma separated)
  uint64_t memory_budget = 0;             // memory_budget: bytes for resident models (0 = auto)
  bool allow_model_paths = false;         // allow_model_paths: a .gguf path as model name over TCP
  std::string service_group = "nurllama"; // service_group: may use the control socket
  LogLevel log_level = LogLevel::info;    // log_level
  uint64_t max_body_bytes = 64ull << 20;  // max_body
  int max_connections = 512;              // max_connections
  std::string log_file;                   // log_file: "" = <state>/logs/nurllamad.log unless
                                          // stderr is the journal; "none" = stderr only
  int job_workers = 1;                    // job_workers: conversions/quantisations at once
  int job_threads = 0;                    // job_threads: threads per job (0: half the cores)
  CpuTier cpu_tier = CpuTier::avx512;     // cpu_tier: the highest kernel tier (the CPU's best by default)
  std::string config_file;                // where the file part came from ("" = none)

  // Connection limits (http/conn-table.h).
  int max_connections_per_peer = 64;      // max_connections_per_peer: per TCP address
  Nanos header_timeout = std::chrono::seconds(10);  // header_timeout: a new connection's first request
  // Access and the web chat. `bind` (localhost | network) and `port` set host's parts.
  bool access_tokens = false;             // access: "open" | "tokens" (Bearer on /api, /v1, /web)
  std::string default_model;              // default_model: the web chat's first choice
  int user_max_generations = 4;           // user_max_generations: per user at once (0 = no limit)
  std::vector<std::string> trusted_proxies;  // trusted_proxies: addresses whose X-Forwarded-Proto counts
  uint64_t web_max_message = 256 << 10;   // web_max_message: bytes of one chat message
  std::string wizard_file;                // <state>/config.json when it was read ("" = none)
};

struct ConfigSources {
  std::map<std::string, std::string> env;    // the process environment (or a test's)
  std::map<std::string, std::string> flags;  // file-key → value, from the command line
  std::optional<std::string> config_file;    // --config; else NURLLAMA_CONFIG; else the default
  // <state>/config.json (written by `nurllama start`) is read first, under the file above.
  bool under_systemd = false;                // INVOCATION_ID / NOTIFY_SOCKET present
};

Result<Config> load_config(const ConfigSources& src);

// The environment as a map (for ConfigSources::env).
std::map<std::string, std::string> environment_map(char** envp);

// The state directory as the sources say before any file is read (flag, NURLLAMA_HOME,
// NURLLAMA_STATE_DIR, the default): where config.json, history.db and tokens.json live.
std::string state_dir_of(const ConfigSources& src);

// Sizes: "1024", "512MiB", "8GB", "2G" → bytes.
Result<uint64_t> parse_size(const std::string& s);

// The keys accepted in the config file and as --set key=value, for --help and errors.
std::vector<std::string> config_keys();

}  // namespace nurl
