// `logs [-f] [-n N]`: the daemon's log. The system service logs to the journal, so this runs
// `journalctl -u nurllamad.service`; a daemon run by the user writes <state>/logs/nurllamad.log
// (rotated to .1 at 8 MiB), which is printed and, with -f, followed across rotations.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <thread>

#include "api/service-paths.h"
#include "client/context.h"

namespace nurl::client {

namespace {

struct LogsFlags {
  bool follow = false;
  int lines = -1;  // all
  std::string file;
};

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_dir(const char* p) {
  struct stat st {};
  return ::stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

bool service_installed() {
  for (const char* dir : {"/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system",
                          "/usr/local/lib/systemd/system"})
    if (is_file(std::string(dir) + "/" + kServiceUnit)) return true;
  return false;
}

void exec_journalctl(Context& ctx, const LogsFlags& f) {
  std::vector<std::string> args{"journalctl", "--unit", kServiceUnit};
  if (f.lines >= 0) args.insert(args.end(), {"--lines", std::to_string(f.lines)});
  if (f.follow) args.push_back("--follow");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execvp("journalctl", argv.data());
  ctx.fail(std::string("cannot run journalctl: ") + std::strerror(errno) +
           " (the system service logs to the journal; install systemd's journalctl to read it)");
}

// Prints the last `lines` lines (all when negative); returns the offset read up to.
std::streamoff print_tail(const std::string& path, int lines) {
  std::ifstream in(path, std::ios::binary);
  std::deque<std::string> last;
  std::string line;
  std::streamoff end = 0;
  while (std::getline(in, line)) {
    end = in.tellg();
    if (lines < 0) {
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fputc('\n', stdout);
      continue;
    }
    last.push_back(std::move(line));
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  for (const auto& l : last) {
    std::fwrite(l.data(), 1, l.size(), stdout);
    std::fputc('\n', stdout);
  }
  std::fflush(stdout);
  if (end <= 0) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) end = st.st_size;
  }
  return end;
}

// Follows the file like `tail -F`: new bytes as they come; a rotated file (new inode, or
// shorter than what was read) is reopened from its start. Runs until interrupted.
void follow(const std::string& path, std::streamoff offset) {
  struct stat st {};
  ino_t ino = ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
  std::string buf(64 * 1024, '\0');
  while (true) {
    if (::stat(path.c_str(), &st) == 0) {
      if (st.st_ino != ino || st.st_size < offset) {
        ino = st.st_ino;
        offset = 0;
      }
      if (st.st_size > offset) {
        std::ifstream in(path, std::ios::binary);
        in.seekg(offset);
        while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
          std::fwrite(buf.data(), 1, static_cast<size_t>(in.gcount()), stdout);
          offset += in.gcount();
        }
        std::fflush(stdout);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

void add_logs_command(CLI::App& app, Context& ctx) {
  auto f = std::make_shared<LogsFlags>();
  auto* logs = app.add_subcommand("logs", "Show the daemon's log (the journal for the system service)");
  logs->add_flag("-f,--follow", f->follow, "Keep printing new lines as they are logged");
  logs->add_option("-n,--lines", f->lines, "Show only the last N lines")->check(CLI::NonNegativeNumber);
  logs->add_option("--file", f->file, "Read this log file instead of finding the daemon's");
  logs->callback([&ctx, f] {
    const EnvLookup env = process_env();
    std::string path = f->file;
    if (path.empty()) {
      // Talking to the system service (its socket, its unit installed, systemd running): its log
      // is the journal. Otherwise the log file of a daemon run by the user (root's also uses the
      // system socket path), and the journal when there is none.
      const bool service = service_installed() && is_dir("/run/systemd/system");
      if (service && ctx.http->endpoint().unix_socket == kSystemSocket) return exec_journalctl(ctx, *f);
      path = env("NURLLAMA_LOG_FILE");
      if (path.empty()) path = default_log_file(user_state_dir(env));
      if (!is_file(path) && service_installed()) return exec_journalctl(ctx, *f);
    }
    if (!is_file(path))
      return ctx.fail("no daemon log at " + path +
                      " (a daemon started with `nurllama serve` writes it; the system service logs to the "
                      "journal: journalctl -u nurllamad)");
    std::streamoff end = print_tail(path, f->lines);
    if (f->follow) follow(path, end);
  });
}

}  // namespace nurl::client
