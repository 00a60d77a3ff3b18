// The command line: every command registered on one CLI11 App, parsed, run. Part of nurl_client
// (main.cpp only calls it), so the client's one unity batch is the only place CLI11 is compiled.
#include "client/cli.h"

#include <unistd.h>

#include <cstdio>

#include "api/version.h"
#include "cli/cli-docs.h"
#include "client/context.h"
#include "client/manual.h"

namespace nurl::client {

int run_cli(int argc, char** argv) {
  Context ctx;
  ctx.http = std::make_unique<HttpClient>(resolve_endpoint());
  ctx.stdin_tty = isatty(STDIN_FILENO);
  ctx.stdout_tty = isatty(STDOUT_FILENO);
  ctx.stderr_tty = isatty(STDERR_FILENO);

  CLI::App app{"nurllama — run language models locally (client of nurllamad)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("nurllama ") + version_string());
  add_run_commands(app, ctx);
  add_pull_command(app, ctx);
  add_model_commands(app, ctx);
  add_create_command(app, ctx);
  add_inspect_commands(app, ctx);
  add_serve_command(app, ctx);
  add_logs_command(app, ctx);
  add_token_commands(app, ctx);
  add_start_command(app, ctx);
  add_convert_commands(app, ctx);
  add_jobs_command(app, ctx);
  cli::add_docs_option(app, client_manual);  // last: the manual lists every command
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return ctx.exit_code;
}

}  // namespace nurl::client
