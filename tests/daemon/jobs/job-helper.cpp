// Test helper: `nurl_job_helper <home> <input.gguf> <name> <chunks> <delay_ms>` runs one fake
// heavy job (fake-kind.h) in a JobManager and waits (bounded, 60 s), so a test can SIGKILL this
// process in the middle of the job or of a state write.
#include <chrono>

#include "fake-kind.h"
#include "jobs/job-manager.h"

int main(int argc, char** argv) {
  if (argc != 6) return 2;
  nurl::Logger log([](nurl::LogLevel, std::string_view) {});
  auto store = nurl::Store::open(nurl::StoreLayout::at(argv[1]));
  if (!store.ok()) return 3;
  nurl::JobManager jobs(**store, {}, log);
  nurl::test::FakeKindOptions o;
  o.input = argv[2];
  o.chunks = std::atoi(argv[4]);
  o.delay = std::chrono::milliseconds(std::atoi(argv[5]));
  jobs.add_kind(std::make_unique<nurl::test::FakeKind>(o));
  auto job = jobs.submit("fake", {{"source", argv[2]}, {"name", argv[3]}});
  if (!job.ok()) return 4;
  auto s = (*job)->wait(UINT64_MAX - 1, std::chrono::seconds(60));
  return s.state == nurl::JobState::succeeded ? 0 : 5;
}
