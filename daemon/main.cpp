// nurllamad entry point: flags → ConfigSources → run_daemon(). `nurllamad inspect FILE.gguf`
// prints a model's header and tensor table.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>

#include "api/version.h"
#include "cli/cli-docs.h"
#include "config.h"
#include "core/log.h"
#include "daemon.h"
#include "manual.h"
#include "engine/gguf/gguf.h"

extern char** environ;

int main(int argc, char** argv) {
  CLI::App app{"nurllamad: the nurllama service (ollama-compatible HTTP API)"};
  app.set_version_flag("--version", std::string("nurllamad ") + nurl::version_string());

  nurl::ConfigSources src;
  std::string config_file;
  std::vector<std::string> sets;
  // Flags map onto config keys; every key is also settable as --set key=value.
  const std::vector<std::pair<const char*, const char*>> flag_keys = {
      {"--host", "host"},           {"--socket", "socket"},
      {"--models", "models"},       {"--keep-alive", "keep_alive"},
      {"--num-parallel", "num_parallel"}, {"--max-loaded-models", "max_loaded_models"},
      {"--max-queue", "max_queue"}, {"--context-length", "context_length"},
      {"--origins", "origins"},     {"--log-level", "log_level"},
      {"--memory-budget", "memory_budget"},
  };
  std::vector<std::string> flag_values(flag_keys.size());
  for (size_t i = 0; i < flag_keys.size(); ++i)
    app.add_option(flag_keys[i].first, flag_values[i], std::string("config key ") + flag_keys[i].second);
  bool allow_paths = false;
  app.add_flag("--allow-model-paths", allow_paths, "accept a .gguf path as the model name over TCP");
  app.add_option("--config", config_file, "config file (key = value lines)");
  app.add_option("--set", sets, "KEY=VALUE for any config key")->take_all();

  std::string inspect_path;
  auto* inspect = app.add_subcommand("inspect", "print a GGUF file's metadata and tensors");
  inspect->add_option("file", inspect_path, "the .gguf file")->required();

  nurl::cli::add_docs_option(app, nurl::daemon_manual);

  CLI11_PARSE(app, argc, argv);

  if (*inspect) {
    auto f = nurl::gguf::File::open(inspect_path);
    if (!f.ok()) {
      std::fprintf(stderr, "nurllamad: %s\n", f.error().msg.c_str());
      return 1;
    }
    std::fputs(nurl::gguf::describe(*f).c_str(), stdout);
    return 0;
  }

  for (size_t i = 0; i < flag_keys.size(); ++i)
    if (!flag_values[i].empty()) src.flags[flag_keys[i].second] = flag_values[i];
  if (allow_paths) src.flags["allow_model_paths"] = "true";
  for (const auto& kv : sets) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "nurllamad: --set expects KEY=VALUE, got \"%s\"\n", kv.c_str());
      return 2;
    }
    src.flags[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (!config_file.empty()) src.config_file = config_file;
  src.env = nurl::environment_map(environ);
  src.under_systemd = src.env.count("NOTIFY_SOCKET") > 0 || src.env.count("INVOCATION_ID") > 0;

  nurl::Logger log;
  return nurl::run_daemon(std::move(src), log);
}
