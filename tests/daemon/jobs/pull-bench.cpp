// Benchmark (not a test): pull throughput from the loopback test server against `curl -o` of
// the same URL, and the bytes re-transferred by a pull resumed after a dropped connection.
//   nurl-pull-bench [MiB=300] [scratch dir=/tmp]
// The file is stories260K.gguf padded with pseudo-random bytes (GGUF ignores trailing data),
// written under the scratch dir and removed afterwards; nothing goes into the repository.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "jobs/job-manager.h"
#include "support/http-test-server.h"
#include "support/oracles.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

nurl::JobSnapshot pull_once(const fs::path& home, const std::string& url) {
  nurl::Logger log([](nurl::LogLevel, std::string_view) {});
  auto store = nurl::Store::open(nurl::StoreLayout::at(home));
  nurl::JobManager jobs(**store, {}, log);
  auto job = jobs.pull({url, "bench"});
  nurl::JobSnapshot s = (*job)->snapshot();
  while (!nurl::job_done(s.state)) s = (*job)->wait(s.version, std::chrono::seconds(1));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 300;
  fs::path scratch = fs::path(argc > 2 ? argv[2] : "/tmp") / "nurl-pull-bench";
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  fs::path model = scratch / "model.gguf";
  fs::copy_file(nurl::test::model_file("stories260K.gguf"), model);
  nurl::test::write_pattern_file(scratch / "pad", mib << 20, 7);
  {
    std::ofstream out(model, std::ios::app | std::ios::binary);
    std::ifstream pad(scratch / "pad", std::ios::binary);
    out << pad.rdbuf();
  }
  fs::remove(scratch / "pad");
  const uint64_t size = fs::file_size(model);
  const double mb = double(size) / 1e6;

  nurl::test::HttpTestServer server;
  nurl::test::Behaviour b;
  b.file = model.string();
  server.set("/model.gguf", b);
  std::string url = server.url("/model.gguf");
  std::printf("file: %.1f MB served from 127.0.0.1 (page cache warm after the first read)\n", mb);
  {
    std::string warm = "cat '" + model.string() + "' > /dev/null";
    if (std::system(warm.c_str()) != 0) std::fprintf(stderr, "warning: could not read %s ahead\n", model.c_str());
  }

  auto t0 = Clock::now();
  std::string cmd = "curl -s -o '" + (scratch / "curl.out").string() + "' " + url;
  int rc = std::system(cmd.c_str());
  double t_curl = seconds_since(t0);
  t0 = Clock::now();
  cmd = "sha256sum '" + (scratch / "curl.out").string() + "' > /dev/null";
  rc |= std::system(cmd.c_str());
  double t_sum = seconds_since(t0);
  fs::remove(scratch / "curl.out");

  t0 = Clock::now();
  auto s = pull_once(scratch / "home1", url);
  double t_pull = seconds_since(t0);
  fs::remove_all(scratch / "home1");

  std::printf("%-44s %8s %9s\n", "", "seconds", "MB/s");
  std::printf("%-44s %8.2f %9.1f\n", "curl -o (download only)", t_curl, mb / t_curl);
  std::printf("%-44s %8.2f %9.1f\n", "curl -o + sha256sum", t_curl + t_sum, mb / (t_curl + t_sum));
  std::printf("%-44s %8.2f %9.1f   %s\n", "nurllama pull (download+hash+fsync+manifest)", t_pull, mb / t_pull,
              nurl::job_state_name(s.state));

  // Resume: the first response drops at half the file.
  nurl::test::Behaviour drop = b;
  drop.drop_after = size / 2;
  drop.drop_times = 1;
  server.set("/drop.gguf", drop);
  t0 = Clock::now();
  s = pull_once(scratch / "home2", server.url("/drop.gguf"));
  double t_resume = seconds_since(t0);
  auto st = server.stats("/drop.gguf");
  std::printf("resumed pull: %s in %.2f s, %d requests, %llu bytes served for a %llu-byte file "
              "(%lld re-transferred)\n",
              nurl::job_state_name(s.state), t_resume, st.requests, (unsigned long long)st.body_bytes,
              (unsigned long long)size, (long long)(st.body_bytes - size));
  fs::remove_all(scratch);
  return rc == 0 && s.state == nurl::JobState::succeeded ? 0 : 1;
}
