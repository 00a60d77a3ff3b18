#include "config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>
#include "api/service-paths.h"
#include "core/json-text.h"

namespace nurl {

namespace {

std::string trim(std::string s) {
  auto notsp = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), notsp));
  s.erase(std::find_if(s.rbegin(), s.rend(), notsp).base(), s.end());
  if (s.size() >= 2 && ((s.front() == '"' && s.back() == '"') || (s.front() == '\'' && s.back() == '\'')))
    s = s.substr(1, s.size() - 2);
  return s;
}

Result<int> parse_int(const std::string& key, const std::string& v, int lo, int hi) {
  int x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi)
    return Error(Code::invalid_argument, key + ": \"" + v + "\" is not an integer in [" + std::to_string(lo) + ", " +
                                             std::to_string(hi) + "]");
  return x;
}

Result<bool> parse_bool(const std::string& key, const std::string& v) {
  std::string l = v;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  if (l == "1" || l == "true" || l == "yes" || l == "on") return true;
  if (l == "0" || l == "false" || l == "no" || l == "off" || l.empty()) return false;
  return Error(Code::invalid_argument, key + ": \"" + v + "\" is not a boolean");
}

std::vector<std::string> split_list(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct Knob {
  const char* key;                     // config-file key and --set key
  std::vector<const char*> env;        // environment names, preferred first
  std::function<Result<void>(Config&, const std::string&)> apply;
};

const std::vector<Knob>& knobs() {
  static const std::vector<Knob> k = {
      {"host", {"NURLLAMA_HOST", "OLLAMA_HOST"},
       [](Config& c, const std::string& v) -> Result<void> {
         std::string err;
         if (!http::parse_host_port(v, &c.host, &err)) return Error(Code::invalid_argument, "host: " + err);
         return ok();
       }},
      {"socket", {"NURLLAMA_SOCKET"}, [](Config& c, const std::string& v) -> Result<void> { c.socket_path = v; return ok(); }},
      {"models", {"NURLLAMA_MODELS", "OLLAMA_MODELS"},
       [](Config& c, const std::string& v) -> Result<void> { c.models_dir = v; return ok(); }},
      {"state", {"NURLLAMA_HOME", "NURLLAMA_STATE_DIR"}, [](Config& c, const std::string& v) -> Result<void> { c.state_dir = v; return ok(); }},
      {"keep_alive", {"NURLLAMA_KEEP_ALIVE", "OLLAMA_KEEP_ALIVE"},
       [](Config& c, const std::string& v) -> Result<void> {
         auto d = parse_duration(v);
         if (!d.ok()) return d.error().context("keep_alive");
         c.keep_alive = *d;
         return ok();
       }},
      {"max_loaded_models", {"NURLLAMA_MAX_LOADED_MODELS", "OLLAMA_MAX_LOADED_MODELS"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.max_loaded_models, parse_int("max_loaded_models", v, 1, 1024));
         return ok();
       }},
      {"num_parallel", {"NURLLAMA_NUM_PARALLEL", "OLLAMA_NUM_PARALLEL"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.num_parallel, parse_int("num_parallel", v, 1, 256));
         return ok();
       }},
      {"max_queue", {"NURLLAMA_MAX_QUEUE", "OLLAMA_MAX_QUEUE"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.max_queue, parse_int("max_queue", v, 0, 1 << 20));
         return ok();
       }},
      {"context_length", {"NURLLAMA_CONTEXT_LENGTH", "OLLAMA_CONTEXT_LENGTH"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.context_length, parse_int("context_length", v, 16, 1 << 24));
         return ok();
       }},
      {"origins", {"NURLLAMA_ORIGINS", "OLLAMA_ORIGINS"},
       [](Config& c, const std::string& v) -> Result<void> { c.origins = split_list(v); return ok(); }},
      {"memory_budget", {"NURLLAMA_MEMORY_BUDGET"},
       [](Config& c, const std::string& v) -> Result<void> {
         auto b = parse_size(v);
         if (!b.ok()) return b.error().context("memory_budget");
         c.memory_budget = *b;
         return ok();
       }},
      {"allow_model_paths", {"NURLLAMA_ALLOW_MODEL_PATHS"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.allow_model_paths, parse_bool("allow_model_paths", v));
         return ok();
       }},
      {"service_group", {"NURLLAMA_SERVICE_GROUP"},
       [](Config& c, const std::string& v) -> Result<void> { c.service_group = v; return ok(); }},
      {"cpu_tier", {"NURLLAMA_CPU_TIER"},
       [](Config& c, const std::string& v) -> Result<void> {
         for (CpuTier t : kCpuTiers)
           if (v == tier_name(t)) {
             c.cpu_tier = t;
             return ok();
           }
         return Error(Code::invalid_argument, "cpu_tier: '" + v + "' is not one of scalar, avx2, avx_vnni, avx512");
       }},
      {"log_level", {"NURLLAMA_LOG_LEVEL"},
       [](Config& c, const std::string& v) -> Result<void> { c.log_level = parse_log_level(v); return ok(); }},
      {"debug", {"NURLLAMA_DEBUG", "OLLAMA_DEBUG"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(bool on, parse_bool("debug", v));
         if (on) c.log_level = LogLevel::debug;
         return ok();
       }},
      {"max_body", {"NURLLAMA_MAX_BODY"},
       [](Config& c, const std::string& v) -> Result<void> {
         auto b = parse_size(v);
         if (!b.ok()) return b.error().context("max_body");
         c.max_body_bytes = *b;
         return ok();
       }},
      {"max_connections", {"NURLLAMA_MAX_CONNECTIONS"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.max_connections, parse_int("max_connections", v, 1, 1 << 20));
         return ok();
       }},
      {"log_file", {"NURLLAMA_LOG_FILE"},
       [](Config& c, const std::string& v) -> Result<void> { c.log_file = v; return ok(); }},
      {"max_connections_per_peer", {"NURLLAMA_MAX_CONNECTIONS_PER_PEER"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.max_connections_per_peer, parse_int("max_connections_per_peer", v, 1, 1 << 20));
         return ok();
       }},
      {"header_timeout", {"NURLLAMA_HEADER_TIMEOUT"},
       [](Config& c, const std::string& v) -> Result<void> {
         auto d = parse_duration(v);
         if (!d.ok() || d->count() <= 0) return Error(Code::invalid_argument, "header_timeout: \"" + v + "\" is not a positive duration");
         c.header_timeout = *d;
         return ok();
       }},
      {"bind", {"NURLLAMA_BIND"},
       [](Config& c, const std::string& v) -> Result<void> {
         if (v == "localhost") c.host.host = "127.0.0.1";
         else if (v == "network") c.host.host = "0.0.0.0";
         else return Error(Code::invalid_argument, "bind: \"" + v + "\" is not localhost or network");
         return ok();
       }},
      {"port", {"NURLLAMA_PORT"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.host.port, parse_int("port", v, 0, 65535));
         return ok();
       }},
      {"access", {"NURLLAMA_ACCESS"},
       [](Config& c, const std::string& v) -> Result<void> {
         if (v != "open" && v != "tokens") return Error(Code::invalid_argument, "access: \"" + v + "\" is not open or tokens");
         c.access_tokens = v == "tokens";
         return ok();
       }},
      {"default_model", {"NURLLAMA_DEFAULT_MODEL"},
       [](Config& c, const std::string& v) -> Result<void> { c.default_model = v; return ok(); }},
      {"user_max_generations", {"NURLLAMA_USER_MAX_GENERATIONS"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.user_max_generations, parse_int("user_max_generations", v, 0, 1 << 20));
         return ok();
       }},
      {"trusted_proxies", {"NURLLAMA_TRUSTED_PROXIES"},
       [](Config& c, const std::string& v) -> Result<void> { c.trusted_proxies = split_list(v); return ok(); }},
      {"web_max_message", {"NURLLAMA_WEB_MAX_MESSAGE"},
       [](Config& c, const std::string& v) -> Result<void> {
         auto b = parse_size(v);
         if (!b.ok()) return b.error().context("web_max_message");
         c.web_max_message = *b;
         return ok();
       }},
      {"job_workers", {"NURLLAMA_JOB_WORKERS"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.job_workers, parse_int("job_workers", v, 1, 64));
         return ok();
       }},
      {"job_threads", {"NURLLAMA_JOB_THREADS"},
       [](Config& c, const std::string& v) -> Result<void> {
         NURL_ASSIGN(c.job_threads, parse_int("job_threads", v, 0, 1024));
         return ok();
       }},
  };
  return k;
}

const Knob* find_knob(const std::string& key) {
  for (const auto& k : knobs())
    if (key == k.key) return &k;
  return nullptr;
}

std::string env_or(const std::map<std::string, std::string>& env, const char* name, std::string dflt) {
  auto it = env.find(name);
  return (it == env.end() || it->second.empty()) ? dflt : it->second;
}

// <state>/config.json: an object of config keys; strings, numbers, booleans and lists of strings.
Result<void> apply_json_file(Config& c, const std::string& path) {
  std::ifstream in(path);
  if (!in) return ok();
  nlohmann::json j = parse_json(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  if (j.is_discarded() || !j.is_object()) return Error(Code::invalid_argument, path + ": not a JSON object");
  for (const auto& [key, val] : j.items()) {
    const Knob* k = find_knob(key);
    if (!k) return Error(Code::invalid_argument, path + ": unknown key \"" + key + "\"");
    std::string text;
    if (val.is_null()) continue;
    if (val.is_string()) text = val.get<std::string>();
    else if (val.is_boolean()) text = val.get<bool>() ? "true" : "false";
    else if (val.is_number()) text = dump_json(val);
    else if (val.is_array()) {
      for (const auto& item : val) {
        if (!item.is_string()) return Error(Code::invalid_argument, path + ": " + key + ": expected a list of strings");
        text += (text.empty() ? "" : ",") + item.get<std::string>();
      }
    } else {
      return Error(Code::invalid_argument, path + ": " + key + ": expected a string, number, boolean or list");
    }
    auto r = k->apply(c, text);
    if (!r.ok()) return r.error().context(path);
  }
  c.wizard_file = path;
  return ok();
}

std::string default_state_dir(const ConfigSources& src) {
  if (src.under_systemd) return env_or(src.env, "STATE_DIRECTORY", "/var/lib/nurllama");
  return env_or(src.env, "HOME", "/var/lib/nurllama") + "/.nurllama";
}

}  // namespace

std::vector<std::string> config_keys() {
  std::vector<std::string> out;
  for (const auto& k : knobs()) out.push_back(k.key);
  return out;
}

Result<uint64_t> parse_size(const std::string& s) {
  std::string t = trim(s);
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || v < 0) return Error(Code::invalid_argument, "invalid size \"" + s + "\"");
  std::string unit(p, static_cast<size_t>(t.data() + t.size() - p));
  unit = trim(unit);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
  double mul = 1;
  if (unit.empty() || unit == "b") mul = 1;
  else if (unit == "k" || unit == "kb") mul = 1e3;
  else if (unit == "m" || unit == "mb") mul = 1e6;
  else if (unit == "g" || unit == "gb") mul = 1e9;
  else if (unit == "t" || unit == "tb") mul = 1e12;
  else if (unit == "kib") mul = 1024.0;
  else if (unit == "mib") mul = 1024.0 * 1024;
  else if (unit == "gib") mul = 1024.0 * 1024 * 1024;
  else if (unit == "tib") mul = 1024.0 * 1024 * 1024 * 1024;
  else return Error(Code::invalid_argument, "invalid size unit in \"" + s + "\" (use B, KB, MB, GB, KiB, MiB, GiB)");
  return static_cast<uint64_t>(v * mul);
}

std::string state_dir_of(const ConfigSources& src) {
  if (auto it = src.flags.find("state"); it != src.flags.end() && !it->second.empty()) return it->second;
  for (const char* name : {"NURLLAMA_HOME", "NURLLAMA_STATE_DIR"})
    if (auto v = env_or(src.env, name, ""); !v.empty()) return v;
  return default_state_dir(src);
}

std::map<std::string, std::string> environment_map(char** envp) {
  std::map<std::string, std::string> m;
  for (char** e = envp; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) m[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return m;
}

Result<Config> load_config(const ConfigSources& src) {
  Config c;
  // Defaults that depend on where we run.
  const std::string home = env_or(src.env, "HOME", "/var/lib/nurllama");
  c.state_dir = default_state_dir(src);
  if (src.under_systemd) {
    c.socket_path = env_or(src.env, "RUNTIME_DIRECTORY", "/run/nurllama") + "/nurllamad.sock";
  } else {
    // Where the client looks first (api/service-paths.h).
    c.socket_path = user_socket_path([&](const char* k) { return env_or(src.env, k, ""); }, ::getuid());
  }

  // The config file: explicit (must exist), else the default location (may be absent).
  std::string path;
  bool required = false;
  if (src.config_file) {
    path = *src.config_file;
    required = true;
  } else if (auto e = env_or(src.env, "NURLLAMA_CONFIG", ""); !e.empty()) {
    path = e;
    required = true;
  } else if (src.under_systemd) {
    path = "/etc/nurllama/nurllamad.conf";
  } else {
    path = env_or(src.env, "XDG_CONFIG_HOME", home + "/.config") + "/nurllama/nurllamad.conf";
  }
  // The wizard's JSON first, so the hand-written file, environment and flags override it.
  if (auto r = apply_json_file(c, state_dir_of(src) + "/config.json"); !r.ok()) return r.error();

  std::ifstream in(path);
  if (!in && required) return Error(Code::not_found, "config file " + path + " cannot be read");
  if (in) {
    c.config_file = path;
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      auto hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      line = trim(line);
      if (line.empty()) continue;
      auto eq = line.find('=');
      const std::string where = path + ":" + std::to_string(lineno);
      if (eq == std::string::npos) return Error(Code::invalid_argument, where + ": expected key = value");
      std::string key = trim(line.substr(0, eq)), val = trim(line.substr(eq + 1));
      const Knob* k = find_knob(key);
      if (!k) return Error(Code::invalid_argument, where + ": unknown key \"" + key + "\"");
      auto r = k->apply(c, val);
      if (!r.ok()) return r.error().context(where);
    }
  }

  // The environment: the first set name of each knob wins (NURLLAMA_* before OLLAMA_*).
  for (const auto& k : knobs()) {
    for (const char* name : k.env) {
      auto it = src.env.find(name);
      if (it == src.env.end() || it->second.empty()) continue;
      auto r = k.apply(c, it->second);
      if (!r.ok()) return r.error().context(std::string("environment ") + name);
      break;
    }
  }

  for (const auto& [key, val] : src.flags) {
    const Knob* k = find_knob(key);
    if (!k) return Error(Code::invalid_argument, "unknown setting \"" + key + "\"");
    auto r = k->apply(c, val);
    if (!r.ok()) return r.error().context("flag --" + key);
  }
  // The store lives under the state directory unless models was set explicitly.
  if (c.models_dir.empty()) c.models_dir = c.state_dir + "/models";
  return c;
}

}  // namespace nurl
