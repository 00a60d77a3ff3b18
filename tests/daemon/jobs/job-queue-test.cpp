// The job queue with a fake heavy kind (fake-kind.h) that has the engine's contract. Oracles: the
// copy's bytes against the input's (coreutils sha256sum and the golden digest), the kernel's
// word on thread policy and niceness, the files on disk after cancels and SIGKILLs.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <random>
#include <thread>

#include "fake-kind.h"
#include "engine/quant/quantize-model.h"
#include "jobs/convert.h"
#include "jobs/job-manager.h"
#include "jobs/quantize.h"
#include "support/http-test-server.h"
#include "support/oracles.h"
#include "support/temp-dir.h"

extern char** environ;

namespace nurl {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

JobSnapshot wait_done(Job& job, std::chrono::seconds limit = 30s) {
  auto until = std::chrono::steady_clock::now() + limit;
  JobSnapshot s = job.snapshot();
  while (!job_done(s.state) && std::chrono::steady_clock::now() < until) s = job.wait(s.version, 200ms);
  return s;
}

// Waits (bounded) until `pred` holds.
template <class F>
bool eventually(F pred, std::chrono::milliseconds limit = 10s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

class JobQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NURL_REQUIRE_TESTDATA();
    input_ = test::model_file("stories260K.gguf");
    golden_ = "sha256:" + test::golden_model("stories260K")["sha256"].get<std::string>();
    open_store();
  }
  void open_store() {
    auto s = Store::open(StoreLayout::at(dir_.path()));
    ASSERT_TRUE(s.ok());
    store_ = std::move(*s);
  }
  std::unique_ptr<JobManager> manager(JobsConfig cfg = {}, int chunks = 16, std::chrono::milliseconds delay = 0ms) {
    PullConfig pc;
    pc.backoff = 10ms;
    auto m = std::make_unique<JobManager>(*store_, pc, log_, cfg);
    test::FakeKindOptions o;
    o.input = input_;
    o.chunks = chunks;
    o.delay = delay;
    o.seen = &seen_;
    m->add_kind(std::make_unique<test::FakeKind>(o));
    return m;
  }
  std::shared_ptr<Job> submit(JobManager& m, const std::string& name, int threads = 0) {
    nlohmann::json r = {{"source", input_.string()}, {"name", name}};
    if (threads) r["threads"] = threads;
    auto j = m.submit("fake", r);
    EXPECT_TRUE(j.ok()) << j.error().msg;
    return j.ok() ? *j : nullptr;
  }
  // Nothing of a job is left: no partial or job output in blobs, no blob, no manifest, no work dir.
  void expect_nothing_left(const std::string& id) {
    for (const auto& f : files_in(store_->layout().blobs())) ADD_FAILURE() << "left in blobs/: " << f;
    EXPECT_TRUE(store_->list().empty());
    EXPECT_FALSE(fs::exists(store_->layout().jobs() / (id + ".d")));
  }

  test::TempDir dir_;
  Logger log_{[](LogLevel, std::string_view) {}};
  std::unique_ptr<Store> store_;
  fs::path input_;
  std::string golden_;
  test::FakeObservations seen_;
};

TEST_F(JobQueueTest, HeavyJobImportsAnExactCopyAndReportsProgress) {
  auto m = manager();
  auto job = submit(*m, "me/copy:v1");
  ASSERT_TRUE(job);
  auto s = wait_done(*job);
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  auto r = store_->resolve("me/copy:v1");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(test::sha256sum(r->blob_path), golden_);
  EXPECT_EQ(r->manifest.source, input_.string());
  std::vector<std::string> st;
  for (auto& e : s.events) st.push_back(e.status + "|" + e.stage);
  EXPECT_EQ(st, (std::vector<std::string>{"copying model|tensors", "copying model|finishing",
                                          "verifying sha256 digest|verifying", "writing manifest|importing",
                                          "success|"}));
  EXPECT_EQ(s.events[0].total, fs::file_size(input_));
  EXPECT_EQ(files_in(store_->layout().blobs()), std::vector<std::string>{"sha256-" + golden_.substr(7)});
  EXPECT_FALSE(fs::exists(store_->layout().jobs() / (job->id() + ".d")));
}

TEST_F(JobQueueTest, OutputFileTargetLeavesTheStoreAlone) {
  auto m = manager();
  fs::path out = dir_ / "out.gguf";
  auto j = m->submit("fake", {{"source", input_.string()}, {"output", out.string()}});
  ASSERT_TRUE(j.ok()) << j.error().msg;
  ASSERT_EQ(wait_done(**j).state, JobState::succeeded);
  EXPECT_EQ(test::sha256sum(out), golden_);
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  EXPECT_TRUE(store_->list().empty());
  EXPECT_TRUE(files_in(store_->layout().blobs()).empty());
  EXPECT_FALSE(m->submit("fake", {{"source", input_.string()}, {"output", "relative.gguf"}}).ok());
  EXPECT_FALSE(m->submit("fake", {{"source", input_.string()}}).ok()) << "a target is required";
}

TEST_F(JobQueueTest, OneWorkerRunsHeavyJobsOneAtATimeWhilePullsRunBeside) {
  test::HttpTestServer server;
  test::Behaviour b;
  std::ifstream in(input_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  b.content = std::make_shared<const std::string>(ss.str());
  server.set("/m.gguf", b);
  auto m = manager({1, 0, 10}, 20, 40ms);  // ~0.8 s per heavy job
  auto a = submit(*m, "me/a:v"), c = submit(*m, "me/c:v");
  ASSERT_TRUE(eventually([&] { return a->snapshot().state == JobState::running; }));
  EXPECT_EQ(c->snapshot().state, JobState::queued);
  EXPECT_EQ(m->describe(c->id())->value("queue_position", -1), 0);
  // A pull is not queued behind the heavy job.
  auto p = m->pull({server.url("/m.gguf"), "me/pulled:v"});
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(wait_done(**p).state, JobState::succeeded);
  EXPECT_EQ(a->snapshot().state, JobState::running) << "the pull finished while the heavy job still ran";
  EXPECT_EQ(c->snapshot().state, JobState::queued);
  ASSERT_EQ(wait_done(*a).state, JobState::succeeded);
  ASSERT_EQ(wait_done(*c).state, JobState::succeeded);
  EXPECT_EQ(test::sha256sum(store_->resolve("me/c:v")->blob_path), golden_);
}

TEST_F(JobQueueTest, TwoWorkersRunTwoJobsAtOnce) {
  auto m = manager({2, 0, 10}, 20, 40ms);
  auto a = submit(*m, "me/a:v"), c = submit(*m, "me/c:v");
  EXPECT_TRUE(eventually([&] {
    return a->snapshot().state == JobState::running && c->snapshot().state == JobState::running;
  }));
  ASSERT_EQ(wait_done(*a).state, JobState::succeeded);
  ASSERT_EQ(wait_done(*c).state, JobState::succeeded);
}

TEST_F(JobQueueTest, JobThreadsRunAtLowPriorityAndTheirThreadsInherit) {
  auto m = manager({1, 0, 7});
  ASSERT_EQ(wait_done(*submit(*m, "me/p:v")).state, JobState::succeeded);
  EXPECT_EQ(seen_.policy, SCHED_BATCH);
  EXPECT_EQ(seen_.nice, 7);
  EXPECT_EQ(seen_.child_policy, SCHED_BATCH) << "a thread the job starts (the engine's workers) inherits";
  EXPECT_EQ(seen_.child_nice, 7);
  // The caller's (an I/O thread's) priority is untouched.
  EXPECT_EQ(::sched_getscheduler(0), SCHED_OTHER);
}

TEST_F(JobQueueTest, ThreadsPerJobAreCapped) {
  auto m = manager({1, 3, 10});
  ASSERT_EQ(wait_done(*submit(*m, "me/t:a", 8)).state, JobState::succeeded);
  EXPECT_EQ(seen_.threads_given, 3);
  ASSERT_EQ(wait_done(*submit(*m, "me/t:b", 2)).state, JobState::succeeded);
  EXPECT_EQ(seen_.threads_given, 2);
  ASSERT_EQ(wait_done(*submit(*m, "me/t:c")).state, JobState::succeeded);
  EXPECT_EQ(seen_.threads_given, 3);
}

TEST_F(JobQueueTest, TheSameRequestAttachesToTheRunningJob) {
  auto m = manager({1, 0, 10}, 20, 20ms);
  auto a = submit(*m, "me/same:v"), b = submit(*m, "me/same:v");
  EXPECT_EQ(a.get(), b.get());
  auto other = submit(*m, "me/other:v");
  EXPECT_NE(a.get(), other.get()) << "another target is another job";
  ASSERT_EQ(wait_done(*a).state, JobState::succeeded);
  ASSERT_EQ(wait_done(*other).state, JobState::succeeded);
  EXPECT_EQ(seen_.runs, 2);
  EXPECT_EQ(m->list().size(), 2u);
}

TEST_F(JobQueueTest, CancelOfARunningJobLeavesNothing) {
  auto m = manager({1, 0, 10}, 40, 30ms);
  auto job = submit(*m, "me/gone:v");
  ASSERT_TRUE(eventually([&] { return seen_.chunks_written >= 3; }));
  ASSERT_TRUE(fs::exists(store_->layout().blobs() / ("job-" + job->id() + ".gguf.partial")));
  ASSERT_TRUE(m->cancel(job->id()).ok());
  auto s = wait_done(*job, 5s);
  EXPECT_EQ(s.state, JobState::cancelled);
  expect_nothing_left(job->id());
  EXPECT_EQ(m->cancel("fake-unknown").error().code, Code::not_found);
}

TEST_F(JobQueueTest, CancelOfAQueuedJobEndsItAtOnce) {
  auto m = manager({1, 0, 10}, 40, 30ms);
  auto a = submit(*m, "me/a:v"), c = submit(*m, "me/c:v");
  ASSERT_TRUE(eventually([&] { return a->snapshot().state == JobState::running; }));
  ASSERT_TRUE(m->cancel(c->id()).ok());
  EXPECT_EQ(c->snapshot().state, JobState::cancelled);
  ASSERT_TRUE(m->cancel(a->id()).ok());
  EXPECT_EQ(wait_done(*a, 5s).state, JobState::cancelled);
  expect_nothing_left(a->id());
  EXPECT_EQ(seen_.runs, 1) << "the cancelled queued job never ran";
}

// Reads the helper's persisted job state (what survives a SIGKILL).
nlohmann::json job_file(const fs::path& jobs_dir) {
  for (const auto& f : files_in(jobs_dir))
    if (f.ends_with(".json")) {
      auto text = read_small_file(jobs_dir / f);
      if (text.ok()) return nlohmann::json::parse(*text, nullptr, false);
    }
  return nullptr;
}

pid_t spawn_helper(const std::string& home, const std::string& input, const std::string& name, int chunks,
                   int delay_ms) {
  std::string c = std::to_string(chunks), d = std::to_string(delay_ms);
  std::string h = home, i = input, n = name;
  char* argv[] = {const_cast<char*>(NURL_JOB_HELPER), h.data(), i.data(), n.data(), c.data(), d.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, NURL_JOB_HELPER, nullptr, nullptr, argv, environ) != 0) return -1;
  return pid;
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

TEST_F(JobQueueTest, KilledDaemonResumesFromTheSavedTensorAndTheResultIsExact) {
  const int chunks = 24;
  pid_t pid = spawn_helper(dir_.path().string(), input_.string(), "me/resumed:v", chunks, 60);
  ASSERT_GT(pid, 0);
  int reached = 0;
  ASSERT_TRUE(eventually(
      [&] {
        auto j = job_file(store_->layout().jobs());
        if (j.is_object() && j.contains("saved")) reached = j["saved"]["resume"].value("tensors_done", 0);
        return reached >= 6;
      },
      20s));
  kill_and_reap(pid);
  EXPECT_TRUE(store_->list().empty()) << "no half-written model is visible";

  open_store();
  auto m = manager({1, 0, 10}, chunks);
  ASSERT_TRUE(m->restore().ok());
  auto jobs = m->list();
  ASSERT_EQ(jobs.size(), 1u);
  auto s = wait_done(*m->find(jobs[0].id));
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_GE(seen_.resumed_at, reached) << "resumed from the saved tensor";
  EXPECT_EQ(seen_.chunks_written, chunks - seen_.resumed_at) << "only the missing tensors were written again";
  EXPECT_EQ(test::sha256sum(store_->resolve("me/resumed:v")->blob_path), golden_);
  EXPECT_EQ(files_in(store_->layout().blobs()), std::vector<std::string>{"sha256-" + golden_.substr(7)});

  // Another restart lists the job as finished and runs nothing.
  m.reset();
  auto m2 = manager();
  ASSERT_TRUE(m2->restore().ok());
  ASSERT_EQ(m2->list().size(), 1u);
  EXPECT_EQ(m2->list()[0].state, JobState::succeeded);
  EXPECT_EQ(seen_.runs, 1);
}

TEST_F(JobQueueTest, DamagedPartialAfterAKillStartsOverAndStaysExact) {
  const int chunks = 24;
  pid_t pid = spawn_helper(dir_.path().string(), input_.string(), "me/damaged:v", chunks, 40);
  ASSERT_GT(pid, 0);
  fs::path partial;
  ASSERT_TRUE(eventually(
      [&] {
        auto j = job_file(store_->layout().jobs());
        if (!j.is_object() || !j.contains("saved")) return false;
        partial = store_->layout().blobs() / ("job-" + j["id"].get<std::string>() + ".gguf.partial");
        return j["saved"]["resume"].value("tensors_done", 0) >= 4;
      },
      20s));
  kill_and_reap(pid);
  {
    std::fstream f(partial, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');  // a torn or damaged prefix
  }
  open_store();
  auto m = manager({1, 0, 10}, chunks);
  ASSERT_TRUE(m->restore().ok());
  auto s = wait_done(*m->find(m->list()[0].id));
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(seen_.resumed_at, -1) << "a damaged prefix is not resumed";
  EXPECT_EQ(seen_.chunks_written, chunks);
  EXPECT_EQ(test::sha256sum(store_->resolve("me/damaged:v")->blob_path), golden_);
}

TEST_F(JobQueueTest, KillsDuringStateWritesLeaveReadableJobFiles) {
  // Many small tensors without a delay: the helper rewrites its job file as fast as it can.
  std::mt19937 rng(12345);
  for (int round = 0; round < 4; ++round) {
    pid_t pid = spawn_helper(dir_.path().string(), input_.string(), "me/w:v", 300, 0);
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(eventually([&] { return job_file(store_->layout().jobs()).is_object(); }, 10s));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(5, 80)(rng)));
    kill_and_reap(pid);
    for (const auto& f : files_in(store_->layout().jobs())) {
      if (!f.ends_with(".json") || f[0] == '.') continue;
      auto text = read_small_file(store_->layout().jobs() / f);
      ASSERT_TRUE(text.ok());
      auto j = nlohmann::json::parse(*text, nullptr, false);
      ASSERT_TRUE(j.is_object()) << f << " is torn: " << text->substr(0, 200);
      EXPECT_EQ(j.value("id", "") + ".json", f);
    }
  }
  // Restore reads them all, removes the temp files of cut writes, and every job finishes exact.
  open_store();
  auto m = manager({2, 0, 10}, 300);
  ASSERT_TRUE(m->restore().ok());
  for (const auto& f : files_in(store_->layout().jobs())) EXPECT_NE(f.rfind(".tmp-", 0), 0u) << f;
  auto jobs = m->list();
  ASSERT_FALSE(jobs.empty());
  for (const auto& j : jobs) {
    auto s = wait_done(*m->find(j.id), 60s);
    EXPECT_EQ(s.state, JobState::succeeded) << j.id << ": " << s.error;
  }
  auto r = store_->resolve("me/w:v");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(test::sha256sum(r->blob_path), golden_);
}

TEST_F(JobQueueTest, HostileJobFilesAreSkippedAtRestore) {
  fs::create_directories(store_->layout().jobs());
  const std::pair<const char*, const char*> files[] = {
      {"pull-1", "not json"},
      {"pull-2", R"({"id":"pull-2","state":"running","kind":7,"request":{"source":5,"name":[]}})"},
      {"pull-3", R"({"id":"pull-other","state":"running","request":{"source":"/x.gguf"}})"},
      {"pull-4", R"({"id":"pull-4","state":"paused","request":{"source":"/x.gguf"}})"},
      {"pull-5", R"({"id":"pull-5","state":"running","kind":"teleport","request":{}})"},
      {"fake-6", R"({"id":"fake-6","state":"running","kind":"fake","request":{"source":"/x","name":"../.."}})"},
      {"fake-7", R"({"id":"fake-7","state":"succeeded","kind":"fake","request":{"source":"/x","name":"ok:v"},)"
                 R"("progress":{"status":"success","total":"many"}})"},
  };
  for (const auto& [id, text] : files) std::ofstream(store_->layout().jobs() / (std::string(id) + ".json")) << text;
  auto m = manager();
  ASSERT_TRUE(m->restore().ok());
  auto jobs = m->list();
  ASSERT_EQ(jobs.size(), 1u) << "only the well-formed finished job is listed";
  EXPECT_EQ(jobs[0].id, "fake-7");
  EXPECT_EQ(jobs[0].state, JobState::succeeded);
  EXPECT_EQ(seen_.runs, 0);
}

// The kinds that write a GGUF plan alike: the type is matched ignoring case and given back as the
// engine spells it, an unknown one is an error that lists what there is, and the output target
// and threads end up in the persisted request.
TEST(GgufJobKinds, PlansMatchTheTypeIgnoringCaseAndListTheTypesOnAMiss) {
  auto quantize = make_quantize_kind();
  auto p = quantize->plan({{"source", "/models/in.gguf"}, {"type", "q4_k_m"}, {"output", "/models/out.gguf"}, {"threads", 3}});
  ASSERT_TRUE(p.ok()) << p.error().msg;
  EXPECT_EQ(p->request["type"], "Q4_K_M");
  EXPECT_EQ(p->request["output"], "/models/out.gguf");
  EXPECT_EQ(p->request["threads"], 3);
  EXPECT_EQ(p->key, "/models/in.gguf -> Q4_K_M -> /models/out.gguf");
  EXPECT_TRUE(quantize->heavy());

  auto miss = quantize->plan({{"source", "/models/in.gguf"}, {"type", "q9_z"}, {"name", "x:v1"}});
  ASSERT_FALSE(miss.ok());
  EXPECT_EQ(miss.error().code, Code::invalid_argument);
  EXPECT_NE(miss.error().msg.find("unknown quantisation type \"q9_z\" (one of "), std::string::npos) << miss.error().msg;
  for (const auto& t : quant::quantize_types()) EXPECT_NE(miss.error().msg.find(t), std::string::npos) << t;

  auto convert = make_convert_kind();
  auto c = convert->plan({{"source", "/ckpt/qwen"}, {"type", "F16"}, {"name", "qwen:f16"}});
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->request["type"], "f16");
  EXPECT_FALSE(c->request.contains("threads"));
  EXPECT_TRUE(convert->heavy());
  auto cmiss = convert->plan({{"source", "/ckpt/qwen"}, {"type", "f8"}, {"name", "qwen:f16"}});
  ASSERT_FALSE(cmiss.ok());
  EXPECT_NE(cmiss.error().msg.find("unknown output type \"f8\" (one of "), std::string::npos) << cmiss.error().msg;
}

}  // namespace
}  // namespace nurl
