#include "client/manual.h"

#include "api/version.h"

namespace nurl::client {

cli::Manual client_manual() {
  cli::Manual m;
  m.program = "nurllama";
  m.section = 1;
  m.version = version_string();
  m.summary = "run language models locally (client of nurllamad)";
  m.model_positionals = {"model", "models"};
  m.extra = {
      {"Finding the daemon",
       "With no configuration nurllama talks to the daemon over its Unix socket: first the socket of a "
       "daemon run by the user ($XDG_RUNTIME_DIR/nurllama/nurllamad.sock, or /tmp/nurllama-UID/nurllamad.sock "
       "without XDG_RUNTIME_DIR), then the system service's /run/nurllama/nurllamad.sock, which members of "
       "the nurllama group may use (sudo usermod -aG nurllama $USER, then log in again). When neither "
       "answers, the error says how to start the daemon.\n"},
      {"Environment",
       "NURLLAMA_HOST, OLLAMA_HOST\tTalk to the daemon over TCP at host:port instead of the Unix socket.\n"
       "NURLLAMA_SOCKET\tThe Unix socket of the daemon.\n"
       "NURLLAMA_HOME\tThe state directory of a user's daemon (default ~/.nurllama); logs reads "
       "logs/nurllamad.log in it.\n"
       "NURLLAMA_LOG_FILE\tThe log file logs reads, when the daemon was told to write another.\n"},
      {"Files",
       "/run/nurllama/nurllamad.sock\tThe system service's control socket (group nurllama).\n"
       "~/.nurllama/logs/nurllamad.log\tThe log of a daemon run by the user (the system service logs to the "
       "journal).\n"},
      {"Exit status", "0 on success, 1 when the daemon reports an error or cannot be reached, 2 for bad usage.\n"},
      {"See also", "nurllamad(8), journalctl(1)\n"},
  };
  return m;
}

}  // namespace nurl::client
