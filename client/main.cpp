// nurllama: the thin client. Every command is forwarded to nurllamad (Unix socket by default,
// TCP with NURLLAMA_HOST/OLLAMA_HOST) and its results are streamed back.
#include <unistd.h>

#include <cstdio>

#include "api/version.h"
#include "cli/cli-docs.h"
#include "client/context.h"
#include "client/manual.h"

int main(int argc, char** argv) {
  using namespace nurl::client;
  Context ctx;
  ctx.http = std::make_unique<HttpClient>(resolve_endpoint());
  ctx.stdin_tty = isatty(STDIN_FILENO);
  ctx.stdout_tty = isatty(STDOUT_FILENO);
  ctx.stderr_tty = isatty(STDERR_FILENO);

  CLI::App app{"nurllama — run language models locally (client of nurllamad)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("nurllama ") + nurl::version_string());
  add_run_commands(app, ctx);
  add_pull_command(app, ctx);
  add_model_commands(app, ctx);
  add_create_command(app, ctx);
  add_inspect_commands(app, ctx);
  add_serve_command(app, ctx);
  add_logs_command(app, ctx);
  nurl::cli::add_docs_option(app, client_manual);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return ctx.exit_code;
}
