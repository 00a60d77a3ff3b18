// Test helper: `nurl_pull_helper <home> <source>` starts one pull in a JobManager and waits
// (bounded, 60 s) so the test can kill this process in the middle of the download.
#include <chrono>
#include <thread>

#include "jobs/job-manager.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  nurl::Logger log([](nurl::LogLevel, std::string_view) {});
  auto store = nurl::Store::open(nurl::StoreLayout::at(argv[1]));
  if (!store.ok()) return 3;
  nurl::PullConfig cfg;
  cfg.backoff = std::chrono::milliseconds(10);
  nurl::JobManager jobs(**store, cfg, log);
  auto job = jobs.pull({argv[2], ""});
  if (!job.ok()) return 4;
  auto s = (*job)->wait(UINT64_MAX - 1, std::chrono::seconds(60));
  return s.state == nurl::JobState::succeeded ? 0 : 5;
}
