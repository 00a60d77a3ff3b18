#include "api/service-paths.h"

#include <cstdlib>

namespace nurl {

EnvLookup process_env() {
  return [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
}

std::string user_socket_path(const EnvLookup& env, unsigned uid) {
  if (auto xdg = env("XDG_RUNTIME_DIR"); !xdg.empty()) return xdg + "/nurllama/nurllamad.sock";
  if (uid == 0) return kSystemSocket;
  return "/tmp/nurllama-" + std::to_string(uid) + "/nurllamad.sock";
}

std::string user_state_dir(const EnvLookup& env) {
  for (const char* name : {"NURLLAMA_HOME", "NURLLAMA_STATE_DIR"})
    if (auto v = env(name); !v.empty()) return v;
  auto home = env("HOME");
  return (home.empty() ? std::string(kSystemStateDir) : home) + "/.nurllama";
}

std::string default_log_file(const std::string& state_dir) { return state_dir + "/logs/nurllamad.log"; }

}  // namespace nurl
