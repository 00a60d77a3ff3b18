// What every command gets: the connection to the daemon, terminal facts and the exit status.
// Each command lives in commands/<name>.cpp and registers itself through its add_* function,
// listed once in main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

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
void add_token_commands(CLI::App& app, Context& ctx);    // token create/list/revoke
void add_start_command(CLI::App& app, Context& ctx);     // start (the setup wizard)

// nurllamad next to this binary (or in ../daemon, ../sbin), else "nurllamad" for PATH.
std::string find_daemon();
void add_convert_commands(CLI::App& app, Context& ctx);  // convert, quantize
void add_jobs_command(CLI::App& app, Context& ctx);      // jobs

// Sends a request whose answer is a job's progress stream and shows it as progress bars; reports
// an error (and returns false) unless the job ended with success.
bool stream_progress(Context& ctx, const std::string& method, const std::string& path, const nlohmann::json& body);
// Runs a pull with a progress display (shared by `pull` and `run` of an hf.co ref).
bool pull_with_progress(Context& ctx, const std::string& source, const std::string& name);
// The files of a Hugging Face checkpoint directory that a conversion reads (*.safetensors, *.json,
// tokenizer.model); an error when it has no weights.
Result<std::vector<std::filesystem::path>> checkpoint_files(const std::filesystem::path& dir);
// Uploads each file the daemon lacks to /api/blobs; returns {"file name": "sha256:…"}.
Result<nlohmann::json> upload_blobs(Context& ctx, const std::vector<std::filesystem::path>& files);

}  // namespace nurl::client
