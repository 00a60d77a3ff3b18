// Running llama.cpp's reference tools (shared/tools/llama.cpp, next to the test data) as oracles:
// llama-quantize, llama-tokenize, llama-cli. The shared copy may hold its symlinks as small text
// files naming their target (a copy made without symlink support), so the tools are staged once
// per test process into a private directory with real links: bin/ gets copies of the
// executables (their RUNPATH is $ORIGIN/../lib) and the CPU backends, lib/ links to the libraries.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "support/temp-dir.h"
#include "testdata.h"

namespace nurl::test {

class LlamaCppTools {
 public:
  // The staged tools, or nullptr with `why` set when the reference build is not there.
  static const LlamaCppTools* get(std::string* why) {
    static std::unique_ptr<LlamaCppTools> tools = stage();
    static std::string reason = tools ? "" : "llama.cpp reference tools not found under " + source_dir().string();
    if (!tools && why) *why = reason;
    return tools.get();
  }

  std::filesystem::path bin(const std::string& name) const { return dir_.path() / "bin" / name; }

  // Runs `name args` (shell words), capturing stdout; stderr goes to `log` when given. Returns
  // the exit status (-1 when it could not run).
  int run(const std::string& name, const std::string& args, std::string* out, const std::string& log = "") const {
    const std::string cmd = "'" + bin(name).string() + "' " + args + " 2>" + (log.empty() ? "/dev/null" : "'" + log + "'");
    FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) return -1;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
      if (out) out->append(buf, n);
    const int st = ::pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

 private:
  static std::filesystem::path source_dir() { return std::filesystem::path(testdata_dir()) / ".." / "tools" / "llama.cpp"; }

  // A regular file of a few bytes holding a relative path is a stored symlink: its target.
  static std::filesystem::path resolve(const std::filesystem::path& p) {
    std::error_code ec;
    if (std::filesystem::is_symlink(p, ec)) return std::filesystem::canonical(p, ec);
    if (std::filesystem::file_size(p, ec) < 256) {
      std::ifstream in(p);
      std::string target;
      std::getline(in, target);
      if (!target.empty()) return resolve(p.parent_path() / target);
    }
    return p;
  }

  static std::unique_ptr<LlamaCppTools> stage() {
    namespace fs = std::filesystem;
    const fs::path src = source_dir();
    std::error_code ec;
    if (!fs::exists(src / "bin" / "llama-quantize", ec)) return nullptr;
    auto t = std::unique_ptr<LlamaCppTools>(new LlamaCppTools());
    fs::create_directories(t->dir_.path() / "bin");
    fs::create_directories(t->dir_.path() / "lib");
    for (const char* sub : {"bin", "lib"}) {
      for (const auto& e : fs::directory_iterator(src / sub, ec)) {
        const fs::path target = resolve(e.path());
        const fs::path dst = t->dir_.path() / sub / e.path().filename();
        const bool executable = std::string(sub) == "bin" && e.path().filename().string().rfind("llama-", 0) == 0;
        if (executable) {
          fs::copy_file(target, dst, ec);
        } else {
          fs::create_symlink(target, dst, ec);
        }
      }
    }
    return t;
  }

  LlamaCppTools() = default;
  TempDir dir_;
};

}  // namespace nurl::test
