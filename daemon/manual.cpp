#include "manual.h"

#include "api/version.h"
#include "config.h"

namespace nurl {

cli::Manual daemon_manual() {
  std::string keys;
  for (const auto& k : config_keys()) keys += (keys.empty() ? "" : ", ") + k;
  cli::Manual m;
  m.program = "nurllamad";
  m.section = 8;
  m.version = version_string();
  m.summary = "the nurllama model service (ollama-compatible HTTP API)";
  m.extra = {
      {"Description",
       "nurllamad serves GGUF language models over the ollama HTTP API on 127.0.0.1:11434 and, with "
       "control routes, on a Unix socket. The package runs it as the systemd service nurllamad.service "
       "under the nurllama user; a user may also run it by hand (nurllama serve).\n"},
      {"Configuration",
       "Settings come from built-in defaults, then the config file (/etc/nurllama/nurllamad.conf for the "
       "service, ~/.config/nurllama/nurllamad.conf otherwise, or --config), then the environment, then "
       "the flags. The file has one \"key = value\" per line; the installed one documents every key. "
       "Keys: " + keys + ".\n"},
      {"Environment",
       "NURLLAMA_KEY\tAny configuration key, upper-cased (NURLLAMA_HOST, NURLLAMA_KEEP_ALIVE, ...). The "
       "service reads them from /etc/default/nurllamad too.\n"
       "OLLAMA_HOST, OLLAMA_MODELS, OLLAMA_KEEP_ALIVE\tAccepted as aliases, as are OLLAMA_MAX_LOADED_MODELS, "
       "OLLAMA_NUM_PARALLEL, OLLAMA_MAX_QUEUE, OLLAMA_CONTEXT_LENGTH, OLLAMA_ORIGINS.\n"
       "NOTIFY_SOCKET, WATCHDOG_USEC\tSet by systemd: the daemon reports READY, STATUS, RELOADING, STOPPING "
       "and, when a watchdog is configured, pings every half period after checking its event loop.\n"
       "LISTEN_FDS, LISTEN_FDNAMES\tSet by systemd for socket activation (nurllamad.socket): the daemon "
       "serves the sockets it is handed (named http and control, or matched by family) and binds the rest.\n"
       "JOURNAL_STREAM\tWhen stderr is the journal, entries are sent with their priority and the fields "
       "MODEL, REQUEST_ID and CLIENT.\n"},
      {"Signals",
       "SIGTERM, SIGINT\tStop accepting, end running requests, exit 0.\n"
       "SIGHUP\tRe-read the configuration (systemctl reload nurllamad).\n"},
      {"Files",
       "/etc/nurllama/nurllamad.conf\tThe service's configuration.\n"
       "/var/lib/nurllama\tThe service's state: the model store (models/), jobs, history. Models are user "
       "data: removing or purging the package never deletes them.\n"
       "/run/nurllama/nurllamad.sock\tThe control socket (group nurllama).\n"
       "~/.nurllama/logs/nurllamad.log\tThe log of a daemon run by hand (8 MiB, then rotated to .1).\n"},
      {"See also", "nurllama(1), systemctl(1), journalctl(1), systemd.exec(5)\n"},
  };
  return m;
}

}  // namespace nurl
