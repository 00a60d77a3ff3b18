// `serve` runs nurllamad in the foreground (found next to this binary, then on PATH);
// `version` prints the client's and the daemon's versions.
#include <unistd.h>

#include <filesystem>

#include "api/version.h"
#include "client/context.h"

namespace nurl::client {

std::string find_daemon() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path cand : {self.parent_path() / "nurllamad", self.parent_path() / "../daemon/nurllamad",
                          self.parent_path() / "../sbin/nurllamad"}) {
      if (fs::is_regular_file(cand, ec)) return cand.lexically_normal().string();
    }
  }
  return "nurllamad";  // execvp searches PATH
}

void add_serve_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<std::vector<std::string>>();
  auto* serve = app.add_subcommand("serve", "Run the daemon in the foreground (nurllamad)");
  serve->add_option("args", *args, "Arguments passed to nurllamad");
  serve->allow_extras();
  serve->callback([&ctx, args, serve] {
    std::string exe = find_daemon();
    std::vector<std::string> all{exe};
    for (auto& s : *args) all.push_back(s);
    for (auto& s : serve->remaining()) all.push_back(s);
    std::vector<char*> argv;
    for (auto& s : all) argv.push_back(s.data());
    argv.push_back(nullptr);
    execvp(exe.c_str(), argv.data());
    ctx.fail("could not start " + exe + ": " + std::strerror(errno));
  });

  app.add_subcommand("version", "Show the client and daemon versions")->callback([&ctx] {
    std::printf("client version is %s\n", version_string());
    auto r = ctx.http->request("GET", "/api/version");
    if (r.ok() && r->status == 200) std::printf("daemon version is %s\n", r->json().value("version", "?").c_str());
    else std::printf("Warning: could not reach nurllamad at %s\n", ctx.http->endpoint().describe().c_str());
  });
}

}  // namespace nurl::client
