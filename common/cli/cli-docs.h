// Documentation generated from a CLI11 App: a roff manual page and bash, zsh and fish completion
// scripts. Every subcommand, option and positional the App defines is listed, with its help
// text; hidden ones (empty group) are not. The build runs `<program> --generate-docs=KIND` to
// write the installed files, so they never drift from the program.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace nurl::cli {

struct ManSection {
  std::string title;  // "ENVIRONMENT"
  std::string text;   // paragraphs separated by blank lines; "  item — text" lines become a list
};

struct Manual {
  std::string program;   // "nurllama"
  int section = 1;       // 1 for commands, 8 for daemons
  std::string version;   // "0.1.0"
  std::string summary;   // the NAME line's description
  std::vector<ManSection> extra;  // after OPTIONS and COMMANDS
  // Positionals with these names complete with the installed models (`nurllama list`).
  std::vector<std::string> model_positionals;
};

std::string man_page(const CLI::App& app, const Manual& m);
std::string bash_completion(const CLI::App& app, const Manual& m);
std::string zsh_completion(const CLI::App& app, const Manual& m);
std::string fish_completion(const CLI::App& app, const Manual& m);

// Adds the hidden option --generate-docs=man|bash|zsh|fish: prints that document and exits 0.
// `manual` is called only then.
void add_docs_option(CLI::App& app, std::function<Manual()> manual);

}  // namespace nurl::cli
