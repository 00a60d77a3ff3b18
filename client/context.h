// What every command gets: the connection to the daemon, terminal facts and the exit status.
// Each command lives in commands/<name>.cpp and registers itself through its add_* function,
// listed once in main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "client/http-client.h"

namespace nurl::client {

struct Context {
  std::unique_ptr<HttpClient> http;
  bool stdin_tty = false;
  bool stdout_tty = false;
  bool stderr_tty = false;
  int exit_code = 0;

  // Prints "Error: <msg>" to stderr and sets a non-zero exit status.
  void fail(const std::string& msg, int code = 1);
  void fail(const Error& e) { fail(e.msg); }

  // Sends a request and returns the JSON answer, or reports the daemon's error and returns null.
  nlohmann::json call(const std::string& method, const std::string& path,
                      const std::optional<nlohmann::json>& body = std::nullopt);

  // A model argument as the daemon should see it: an existing .gguf path becomes absolute.
  static std::string model_ref(const std::string& arg);
};

void add_run_commands(CLI::App& app, Context& ctx);      // run, chat
void add_model_commands(CLI::App& app, Context& ctx);    // list, ps, show, rm, cp, stop, verify
void add_pull_command(CLI::App& app, Context& ctx);      // pull
void add_create_command(CLI::App& app, Context& ctx);    // create
void add_inspect_commands(CLI::App& app, Context& ctx);  // tokenize, detok, vocab, logits
void add_serve_command(CLI::App& app, Context& ctx);     // serve, version
void add_logs_command(CLI::App& app, Context& ctx);      // logs

// Runs a pull with a progress display (shared by `pull` and `run` of an hf.co ref).
bool pull_with_progress(Context& ctx, const std::string& source, const std::string& name);

}  // namespace nurl::client
