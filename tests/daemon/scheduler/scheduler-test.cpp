// Scheduler behaviour with fake models: generation events, batching equals solo runs, LRU and
// budget eviction, keep-alive expiry, the bounded queue, cancellation during prefill.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <future>
#include <set>

#include "fake-model.h"

namespace nurl::sched {
namespace {

using namespace std::chrono_literals;
using test::FakeModel;
using test::FakeStats;

struct Harness {
  FakeStats stats;
  Logger log{[](LogLevel, std::string_view) {}, LogLevel::error};
  std::chrono::milliseconds delay{0};
  int eog_after = 0;
  uint64_t estimate = 100;
  std::function<void(const LoadSpec&)> on_load;  // runs inside load (to block it)

  ModelLoader loader() {
    ModelLoader l;
    l.estimate = [this](const LoadSpec& s) -> Result<uint64_t> {
      if (s.path == "missing.gguf") return Error(Code::not_found, "model 'missing' not found");
      return estimate;
    };
    l.load = [this](const LoadSpec& s) -> Result<std::shared_ptr<LoadedModel>> {
      if (on_load) on_load(s);
      if (s.path == "broken.gguf") return Error(Code::corrupt, "broken.gguf: bad magic");
      stats.loads++;
      return std::shared_ptr<LoadedModel>(std::make_shared<FakeModel>(&stats, delay, eog_after));
    };
    return l;
  }
};

std::shared_ptr<Job> gen_job(const std::string& path, const std::string& prompt, int num_predict) {
  auto j = std::make_shared<Job>();
  j->model_name = path;
  j->spec.path = path;
  j->spec.n_ctx = 256;
  j->spec.n_parallel = 4;
  j->num_predict = num_predict;
  j->prepare = [prompt](const LoadedModel& m) -> Result<PreparedPrompt> {
    PreparedPrompt p;
    NURL_ASSIGN(p.tokens, m.tokenize(prompt, true));
    return p;
  };
  j->out = std::make_shared<Channel<Event>>(1024);
  return j;
}

std::shared_ptr<Job> load_job(const std::string& path, std::optional<Nanos> ka = std::nullopt) {
  auto j = gen_job(path, "", 0);
  j->kind = Job::Kind::load;
  j->keep_alive = ka;
  return j;
}

struct Outcome {
  std::string text;
  std::optional<DoneInfo> done;
  std::optional<Error> error;
};

Outcome drain(Job& j) {
  Outcome o;
  while (auto e = j.out->pop_blocking()) {
    if (e->kind == Event::Kind::text) o.text += e->text;
    if (e->kind == Event::Kind::done) o.done = e->done;
    if (e->kind == Event::Kind::error) o.error = e->error;
  }
  return o;
}

std::set<std::string> resident_paths(const Scheduler& s) {
  std::set<std::string> out;
  for (const auto& r : s.resident()) out.insert(r.spec.path);
  return out;
}

// A drained job's worker releases its model just after the final chunk; tests about eviction
// order wait for that so the order they assert does not depend on thread timing.
bool all_idle(const Scheduler& s) {
  for (const auto& r : s.resident())
    if (r.active != 0) return false;
  return true;
}

bool eventually(const std::function<bool()>& cond) {
  for (int i = 0; i < 400; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return cond();
}

SchedulerConfig config(int max_models = 3, uint64_t budget = 0) {
  SchedulerConfig c;
  c.max_loaded_models = max_models;
  c.memory_budget = budget;
  c.num_parallel = 4;
  c.max_queue = 64;
  c.default_keep_alive = std::chrono::minutes(5);
  return c;
}

TEST(Scheduler, GenerateStreamsTextAndFinalCounts) {
  Harness h;
  Scheduler s(config(), h.loader(), h.log);
  auto j = gen_job("a.gguf", "hello", 7);
  ASSERT_TRUE(s.submit(j).ok());
  auto o = drain(*j);
  ASSERT_FALSE(o.error) << o.error->msg;
  ASSERT_TRUE(o.done);
  EXPECT_EQ(o.done->reason, "length");
  EXPECT_EQ(o.done->eval_count, 7);
  EXPECT_EQ(o.done->prompt_eval_count, 5);
  EXPECT_EQ(o.text.size(), 7u);
  EXPECT_EQ(o.done->context.size(), 12u);  // prompt + generated
  EXPECT_GT(o.done->load_duration.count(), 0);
}

TEST(Scheduler, EndOfGenerationStopsWithReasonStop) {
  Harness h;
  h.eog_after = 8;  // the fake emits EOG once 8 tokens are in the cache
  Scheduler s(config(), h.loader(), h.log);
  auto j = gen_job("a.gguf", "abcde", 100);
  ASSERT_TRUE(s.submit(j).ok());
  auto o = drain(*j);
  ASSERT_TRUE(o.done);
  EXPECT_EQ(o.done->reason, "stop");
  EXPECT_EQ(o.done->eval_count, 3);
}

TEST(Scheduler, ParallelSequencesEqualSoloRunsAndAreBatched) {
  const std::vector<std::string> prompts = {"one", "two two", "three three three", "four"};
  std::vector<std::string> solo;
  {
    Harness h;
    Scheduler s(config(), h.loader(), h.log);
    for (const auto& p : prompts) {
      auto j = gen_job("a.gguf", p, 24);
      ASSERT_TRUE(s.submit(j).ok());
      solo.push_back(drain(*j).text);
    }
    EXPECT_EQ(h.stats.max_batch.load(), 1);
  }
  Harness h;
  h.delay = 2ms;
  Scheduler s(config(), h.loader(), h.log);
  // Load first so all four land in the worker together.
  auto l = load_job("a.gguf");
  ASSERT_TRUE(s.submit(l).ok());
  drain(*l);
  std::vector<std::shared_ptr<Job>> jobs;
  for (const auto& p : prompts) {
    jobs.push_back(gen_job("a.gguf", p, 24));
    ASSERT_TRUE(s.submit(jobs.back()).ok());
  }
  std::vector<std::future<Outcome>> outs;
  for (auto& j : jobs) outs.push_back(std::async(std::launch::async, [j] { return drain(*j); }));
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto o = outs[i].get();
    ASSERT_TRUE(o.done);
    EXPECT_EQ(o.text, solo[i]) << "prompt " << prompts[i];
  }
  EXPECT_GT(h.stats.max_batch.load(), 1) << "the sequences were never decoded together";
  EXPECT_EQ(h.stats.loads.load(), 1);
}

TEST(Scheduler, EvictsLeastRecentlyUsedAtModelLimit) {
  Harness h;
  Scheduler s(config(2), h.loader(), h.log);
  for (const char* p : {"a.gguf", "b.gguf", "a.gguf", "c.gguf"}) {
    auto j = load_job(p);
    ASSERT_TRUE(s.submit(j).ok());
    auto o = drain(*j);
    ASSERT_TRUE(o.done) << p;
    EXPECT_EQ(o.done->reason, "load");
    ASSERT_TRUE(eventually([&] { return all_idle(s); }));
  }
  EXPECT_EQ(resident_paths(s), (std::set<std::string>{"a.gguf", "c.gguf"}));  // b was least recent
  EXPECT_EQ(h.stats.loads.load(), 3);
}

TEST(Scheduler, EvictsToFitTheMemoryBudget) {
  Harness h;
  h.estimate = 100;
  Scheduler s(config(10, 250), h.loader(), h.log);
  for (const char* p : {"a.gguf", "b.gguf", "c.gguf"}) {
    auto j = load_job(p);
    ASSERT_TRUE(s.submit(j).ok());
    drain(*j);
    ASSERT_TRUE(eventually([&] { return all_idle(s); }));
  }
  EXPECT_EQ(resident_paths(s), (std::set<std::string>{"b.gguf", "c.gguf"}));
}

TEST(Scheduler, ModelLargerThanBudgetFails) {
  Harness h;
  h.estimate = 1000;
  Scheduler s(config(3, 500), h.loader(), h.log);
  auto j = load_job("a.gguf");
  ASSERT_TRUE(s.submit(j).ok());
  auto o = drain(*j);
  ASSERT_TRUE(o.error);
  EXPECT_NE(o.error->msg.find("memory budget"), std::string::npos) << o.error->msg;
}

TEST(Scheduler, BusyModelIsNotEvictedTheRequestWaits) {
  Harness h;
  h.delay = 5ms;
  Scheduler s(config(1), h.loader(), h.log);
  auto long_job = gen_job("a.gguf", "x", 40);
  ASSERT_TRUE(s.submit(long_job).ok());
  ASSERT_TRUE(eventually([&] { return resident_paths(s).count("a.gguf") == 1; }));
  auto other = gen_job("b.gguf", "y", 2);
  ASSERT_TRUE(s.submit(other).ok());
  auto first = drain(*long_job);
  ASSERT_TRUE(first.done);
  EXPECT_EQ(first.done->eval_count, 40) << "the running model was disturbed";
  auto second = drain(*other);
  ASSERT_TRUE(second.done);
  EXPECT_EQ(resident_paths(s), (std::set<std::string>{"b.gguf"}));
}

TEST(Scheduler, KeepAliveExpiryUnloads) {
  Harness h;
  Scheduler s(config(), h.loader(), h.log);
  auto j = load_job("a.gguf", Nanos(std::chrono::milliseconds(30)));
  ASSERT_TRUE(s.submit(j).ok());
  drain(*j);
  EXPECT_TRUE(eventually([&] { return s.resident().empty(); }));
}

TEST(Scheduler, KeepAliveZeroUnloadsWhenDoneNegativeKeepsForever) {
  Harness h;
  Scheduler s(config(), h.loader(), h.log);
  auto forever = load_job("a.gguf", Nanos(-1));
  ASSERT_TRUE(s.submit(forever).ok());
  drain(*forever);
  auto zero = gen_job("b.gguf", "q", 2);
  zero->keep_alive = Nanos(0);
  ASSERT_TRUE(s.submit(zero).ok());
  ASSERT_TRUE(drain(*zero).done);
  EXPECT_TRUE(eventually([&] { return resident_paths(s) == std::set<std::string>{"a.gguf"}; }));
  auto info = s.resident();
  ASSERT_EQ(info.size(), 1u);
  EXPECT_TRUE(info[0].forever);
}

TEST(Scheduler, UnloadJobUnloadsAnIdleModel) {
  Harness h;
  Scheduler s(config(), h.loader(), h.log);
  auto j = load_job("a.gguf");
  ASSERT_TRUE(s.submit(j).ok());
  drain(*j);
  auto u = load_job("a.gguf", Nanos(0));
  u->kind = Job::Kind::unload;
  ASSERT_TRUE(s.submit(u).ok());
  auto o = drain(*u);
  ASSERT_TRUE(o.done);
  EXPECT_EQ(o.done->reason, "unload");
  EXPECT_TRUE(eventually([&] { return s.resident().empty(); }));
}

TEST(Scheduler, FullQueueIsBusy) {
  Harness h;
  std::promise<void> release;
  auto released = release.get_future().share();
  h.on_load = [released](const LoadSpec&) { released.wait(); };
  auto cfg = config();
  cfg.max_queue = 2;
  Scheduler s(cfg, h.loader(), h.log);
  auto a = gen_job("a.gguf", "x", 1), b = gen_job("a.gguf", "y", 1), c = gen_job("a.gguf", "z", 1);
  ASSERT_TRUE(s.submit(a).ok());
  ASSERT_TRUE(s.submit(b).ok());
  auto r = s.submit(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::busy);
  EXPECT_EQ(http_status(r.error().code), 503);
  release.set_value();
  EXPECT_TRUE(drain(*a).done);
  EXPECT_TRUE(drain(*b).done);
  // Room again once the queue drained.
  auto d = gen_job("a.gguf", "w", 1);
  ASSERT_TRUE(s.submit(d).ok());
  EXPECT_TRUE(drain(*d).done);
}

TEST(Scheduler, CancelDuringPrefillFreesTheSlotAtOnce) {
  Harness h;
  h.delay = 20ms;
  auto cfg = config();
  Scheduler s(cfg, h.loader(), h.log);
  std::string long_prompt(Worker::kPrefillChunk * 6, 'p');
  auto j = gen_job("a.gguf", long_prompt, 5);
  j->spec.n_ctx = 8192;
  ASSERT_TRUE(s.submit(j).ok());
  ASSERT_TRUE(eventually([&] { return h.stats.prefill_calls.load() >= 1; }));
  j->out->cancel();
  auto next = gen_job("a.gguf", "after", 3);
  next->spec.n_ctx = 8192;
  ASSERT_TRUE(s.submit(next).ok());
  auto o = drain(*next);
  ASSERT_TRUE(o.done);
  EXPECT_LT(h.stats.prefill_calls.load(), 6 + 1) << "prefill went on after the cancel";
}

TEST(Scheduler, TruncateFalseRejectsLongPromptTruncateTrueReports) {
  Harness h;
  Scheduler s(config(), h.loader(), h.log);
  std::string prompt(300, 'x');  // n_ctx is 256
  auto strict = gen_job("a.gguf", prompt, 2);
  strict->truncate = false;
  ASSERT_TRUE(s.submit(strict).ok());
  auto o = drain(*strict);
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.error->code, Code::invalid_argument);
  auto lenient = gen_job("a.gguf", prompt, 2);
  ASSERT_TRUE(s.submit(lenient).ok());
  auto o2 = drain(*lenient);
  ASSERT_TRUE(o2.done);
  EXPECT_GT(o2.done->truncated_tokens, 0);
  EXPECT_LT(o2.done->prompt_eval_count, 256);
}

TEST(Scheduler, LoadFailureIsAnErrorEvent) {
  Harness h;
  Scheduler s(config(), h.loader(), h.log);
  auto j = gen_job("broken.gguf", "x", 1);
  ASSERT_TRUE(s.submit(j).ok());
  auto o = drain(*j);
  ASSERT_TRUE(o.error);
  EXPECT_EQ(http_status(o.error->code), 500);
  EXPECT_NE(o.error->msg.find("bad magic"), std::string::npos);
  EXPECT_TRUE(s.resident().empty());
}

TEST(Scheduler, StopEndsWaitingAndRunningJobs) {
  Harness h;
  h.delay = 5ms;
  auto s = std::make_unique<Scheduler>(config(), h.loader(), h.log);
  auto j = gen_job("a.gguf", "x", 100000);
  ASSERT_TRUE(s->submit(j).ok());
  ASSERT_TRUE(eventually([&] { return h.stats.decode_calls.load() > 2; }));
  s->stop();
  auto o = drain(*j);
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.error->code, Code::cancelled);
}

}  // namespace
}  // namespace nurl::sched

namespace nurl::sched {
namespace {

// Jobs of several users queued behind a busy slot, recording the order in which the worker
// takes them (prepare runs when a job gets its slot, so with one slot this is also the order
// of their first tokens).
struct FairRun {
  Harness h;
  std::mutex mu;
  std::vector<std::string> order;

  std::shared_ptr<Job> job(const std::string& user, int n) {
    auto j = gen_job("a.gguf", "p", n);
    j->user = user;
    j->spec.n_parallel = 1;
    j->prepare = [this, user](const LoadedModel& m) -> Result<PreparedPrompt> {
      {
        std::lock_guard lk(mu);
        order.push_back(user);
      }
      PreparedPrompt p;
      NURL_ASSIGN(p.tokens, m.tokenize("p", true));
      return p;
    };
    return j;
  }
};

TEST(Scheduler, QueuedJobsAreServedRoundRobinByUser) {
  FairRun f;
  f.h.delay = 1ms;
  Scheduler s(config(), f.h.loader(), f.h.log);
  auto blocker = f.job("x", 100);
  ASSERT_TRUE(s.submit(blocker).ok());
  ASSERT_TRUE(blocker->out->pop_blocking());  // running: every later job waits for the slot
  std::vector<std::shared_ptr<Job>> jobs;
  for (const char* u : {"alice", "alice", "alice", "bob", "bob", "bob", "carol", "carol", "carol"}) {
    jobs.push_back(f.job(u, 2));
    ASSERT_TRUE(s.submit(jobs.back()).ok());
  }
  drain(*blocker);
  for (auto& j : jobs) EXPECT_TRUE(drain(*j).done);
  EXPECT_EQ(f.order, (std::vector<std::string>{"x", "alice", "bob", "carol", "alice", "bob", "carol", "alice", "bob",
                                               "carol"}));
}

TEST(Scheduler, OneUsersTenQueuedRequestsDelayAnothersFirstByOneTurn) {
  FairRun f;
  f.h.delay = 1ms;
  Scheduler s(config(), f.h.loader(), f.h.log);
  auto blocker = f.job("x", 100);
  ASSERT_TRUE(s.submit(blocker).ok());
  ASSERT_TRUE(blocker->out->pop_blocking());
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 10; ++i) {
    jobs.push_back(f.job("hog", 2));
    ASSERT_TRUE(s.submit(jobs.back()).ok());
  }
  jobs.push_back(f.job("newcomer", 2));
  ASSERT_TRUE(s.submit(jobs.back()).ok());
  drain(*blocker);
  for (auto& j : jobs) EXPECT_TRUE(drain(*j).done);
  ASSERT_EQ(f.order.size(), 12u);
  EXPECT_EQ(f.order[2], "newcomer");  // after the blocker and one of the hog's
}

TEST(Scheduler, PerUserLimitIsRateLimited) {
  Harness h;
  std::promise<void> release;
  auto released = release.get_future().share();
  h.on_load = [released](const LoadSpec&) { released.wait(); };
  auto cfg = config();
  cfg.user_max_generations = 2;
  Scheduler s(cfg, h.loader(), h.log);
  auto mk = [](const std::string& user) {
    auto j = gen_job("a.gguf", "x", 1);
    j->user = user;
    return j;
  };
  auto a1 = mk("u"), a2 = mk("u"), a3 = mk("u"), other = mk("v"), anon1 = mk(""), anon2 = mk(""), anon3 = mk("");
  ASSERT_TRUE(s.submit(a1).ok());
  ASSERT_TRUE(s.submit(a2).ok());
  auto r = s.submit(a3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::rate_limited);
  EXPECT_EQ(http_status(r.error().code), 429);
  EXPECT_TRUE(s.submit(other).ok());  // another user is not affected
  for (auto& j : {anon1, anon2, anon3}) EXPECT_TRUE(s.submit(j).ok());  // anonymous calls have no per-user limit
  release.set_value();
  for (auto& j : {a1, a2, other, anon1, anon2, anon3}) EXPECT_TRUE(drain(*j).done);
  // Finished jobs free the user's share.
  ASSERT_TRUE(eventually([&] { return all_idle(s); }));
  auto again = mk("u");
  EXPECT_TRUE(s.submit(again).ok());
  EXPECT_TRUE(drain(*again).done);
}

}  // namespace
}  // namespace nurl::sched
