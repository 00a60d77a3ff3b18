// Where nurllamad keeps its files by default — one definition for the daemon (its defaults) and
// the client (where it looks), so the two always meet with no configuration.
//   system service: /run/nurllama/nurllamad.sock, state /var/lib/nurllama, log in the journal
//   a user's daemon: $XDG_RUNTIME_DIR/nurllama/nurllamad.sock (without XDG_RUNTIME_DIR:
//     /tmp/nurllama-<uid>/nurllamad.sock; root: the system path), state $NURLLAMA_HOME or
//     ~/.nurllama, log <state>/logs/nurllamad.log
#pragma once

#include <functional>
#include <string>

namespace nurl {

inline constexpr const char* kSystemSocket = "/run/nurllama/nurllamad.sock";
inline constexpr const char* kSystemStateDir = "/var/lib/nurllama";
inline constexpr const char* kServiceUnit = "nurllamad.service";

// Reads an environment variable; "" when unset.
using EnvLookup = std::function<std::string(const char*)>;
EnvLookup process_env();

std::string user_socket_path(const EnvLookup& env, unsigned uid);
// $NURLLAMA_HOME, $NURLLAMA_STATE_DIR, else $HOME/.nurllama.
std::string user_state_dir(const EnvLookup& env);
std::string default_log_file(const std::string& state_dir);

}  // namespace nurl
