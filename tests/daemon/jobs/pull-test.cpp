// Pull jobs against a loopback HTTP server with failure modes. The oracles: the golden sha256 and
// size of each model (shared/testdata/golden), and the server's own count of bytes it sent.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "jobs/job-manager.h"
#include "jobs/pull.h"
#include "support/http-test-server.h"
#include "support/oracles.h"
#include "support/temp-dir.h"

extern char** environ;

namespace nurl {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::Behaviour;

std::shared_ptr<const std::string> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return std::make_shared<const std::string>(ss.str());
}

JobSnapshot wait_done(Job& job, std::chrono::seconds limit = 30s) {
  auto until = std::chrono::steady_clock::now() + limit;
  JobSnapshot s = job.snapshot();
  while (!job_done(s.state) && std::chrono::steady_clock::now() < until) s = job.wait(s.version, 200ms);
  return s;
}

std::vector<std::string> statuses(const JobSnapshot& s) {
  std::vector<std::string> out;
  for (auto& e : s.events) out.push_back((e.status.rfind("pulling ", 0) == 0 && e.status != "pulling manifest") ? "pulling <digest>" : e.status);
  return out;
}

size_t count_blob_files(const StoreLayout& l) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(l.blobs())) n += e.is_regular_file();
  return n;
}

class PullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NURL_REQUIRE_TESTDATA();
    model_ = read_all(test::model_file("stories260K.gguf"));
    golden_ = test::golden_model("stories260K");
    ASSERT_EQ(model_->size(), golden_["size_bytes"].get<uint64_t>());
    open_store();
    cfg_.backoff = 10ms;
    cfg_.max_attempts = 4;
    cfg_.low_speed_time_s = 1;
  }
  void open_store() {
    auto s = Store::open(StoreLayout::at(dir_.path()));
    ASSERT_TRUE(s.ok());
    store_ = std::move(*s);
  }
  std::unique_ptr<JobManager> manager() { return std::make_unique<JobManager>(*store_, cfg_, log_); }
  Behaviour model_route() {
    Behaviour b;
    b.content = model_;
    return b;
  }
  std::string golden_digest() const { return "sha256:" + golden_["sha256"].get<std::string>(); }

  // Pulls and waits; returns the final snapshot.
  JobSnapshot pull(JobManager& m, const std::string& source, const std::string& name = "") {
    auto job = m.pull({source, name});
    EXPECT_TRUE(job.ok()) << job.error().msg;
    if (!job.ok()) return {};
    return wait_done(**job);
  }
  void expect_no_model_visible() {
    EXPECT_TRUE(store_->list().empty());
    for (auto& e : fs::directory_iterator(store_->layout().blobs()))
      EXPECT_NE(e.path().filename().string().rfind("sha256-", 0), 0u) << "blob left: " << e.path();
  }

  test::TempDir dir_;
  test::HttpTestServer server_;
  Logger log_{[](LogLevel, std::string_view) {}};
  PullConfig cfg_;
  std::unique_ptr<Store> store_;
  std::shared_ptr<const std::string> model_;
  nlohmann::json golden_;
};

TEST_F(PullTest, FullPullFollowsOllamaStreamAndDigestIsExact) {
  server_.set("/m.gguf", model_route());
  auto m = manager();
  auto s = pull(*m, server_.url("/m.gguf"));
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(statuses(s), (std::vector<std::string>{"pulling manifest", "pulling <digest>", "verifying sha256 digest",
                                                   "writing manifest", "success"}));
  EXPECT_EQ(s.events[1].total, model_->size());
  EXPECT_EQ(s.events[1].completed, model_->size());
  auto r = store_->resolve("m");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->manifest.digest, golden_digest());
  EXPECT_EQ(test::sha256sum(r->blob_path), golden_digest());
  EXPECT_EQ(r->manifest.source, server_.url("/m.gguf"));
  EXPECT_EQ(server_.stats("/m.gguf").body_bytes, model_->size());
  EXPECT_EQ(count_blob_files(store_->layout()), 1u);  // no .part left behind
}

TEST_F(PullTest, DroppedConnectionResumesWithOnlyTheMissingTail) {
  Behaviour b = model_route();
  b.drop_after = 300000;
  b.drop_times = 2;
  b.etag = "\"v1\"";
  server_.set("/m.gguf", b);
  auto m = manager();
  auto s = pull(*m, server_.url("/m.gguf"), "me/resumed:v1");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  auto st = server_.stats("/m.gguf");
  EXPECT_EQ(st.range_starts, (std::vector<int64_t>{-1, 300000, 600000}));
  EXPECT_EQ(st.body_bytes, model_->size()) << "bytes re-transferred: " << st.body_bytes - model_->size();
  EXPECT_EQ(store_->resolve("me/resumed:v1")->manifest.digest, golden_digest());
}

TEST_F(PullTest, ServerWithoutRangeRestartsCleanly) {
  Behaviour b = model_route();
  b.ranges = false;
  b.drop_after = 300000;
  b.drop_times = 1;
  server_.set("/m.gguf", b);
  auto m = manager();
  auto s = pull(*m, server_.url("/m.gguf"));
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(server_.stats("/m.gguf").body_bytes, 300000 + model_->size());
  EXPECT_EQ(store_->resolve("m")->manifest.digest, golden_digest());
}

TEST_F(PullTest, StalledTransferIsRetriedAndResumed) {
  Behaviour b = model_route();
  b.stall_after = 200000;
  b.stall_ms = 5000;
  b.stall_times = 1;
  server_.set("/m.gguf", b);
  auto m = manager();
  auto s = pull(*m, server_.url("/m.gguf"));
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  auto st = server_.stats("/m.gguf");
  ASSERT_EQ(st.range_starts.size(), 2u);
  EXPECT_EQ(st.range_starts[1], 200000);
  EXPECT_EQ(store_->resolve("m")->manifest.digest, golden_digest());
}

TEST_F(PullTest, RedirectIsFollowed) {
  server_.set("/m.gguf", model_route());
  Behaviour r;
  r.status = 302;
  r.location = server_.url("/m.gguf");
  server_.set("/short", r);
  auto m = manager();
  auto s = pull(*m, server_.url("/short"), "redirected");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(store_->resolve("redirected")->manifest.digest, golden_digest());
}

TEST_F(PullTest, HttpErrorsEndTheJobWithAClearMessage) {
  struct Case {
    int status;
    const char* want;
    int requests;  // 404/401 are final, 500 is retried
  };
  for (Case c : {Case{404, "not found (404)", 1}, Case{401, "access denied (401)", 1},
                 Case{403, "access denied (403)", 1}, Case{500, "server error 500", 4}}) {
    std::string path = "/e" + std::to_string(c.status);
    Behaviour b;
    b.status = c.status;
    server_.set(path, b);
    auto m = manager();
    auto s = pull(*m, server_.url(path));
    EXPECT_EQ(s.state, JobState::failed);
    EXPECT_NE(s.error.find(c.want), std::string::npos) << s.error;
    EXPECT_EQ(server_.stats(path).requests, c.requests) << c.status;
  }
  expect_no_model_visible();
}

TEST_F(PullTest, LyingLengthsFail) {
  Behaviour longer = model_route();
  longer.length_delta = 1000;  // announces more than it sends
  server_.set("/long.gguf", longer);
  Behaviour shorter = model_route();
  shorter.length_delta = -1000;  // announces (and sends) less: a truncated GGUF
  server_.set("/short.gguf", shorter);
  auto m = manager();
  auto s = pull(*m, server_.url("/long.gguf"));
  EXPECT_EQ(s.state, JobState::failed);
  EXPECT_NE(s.error.find("failed 4 times"), std::string::npos) << s.error;
  s = pull(*m, server_.url("/short.gguf"));
  EXPECT_EQ(s.state, JobState::failed);
  EXPECT_NE(s.error.find("GGUF"), std::string::npos) << s.error;
  expect_no_model_visible();
}

TEST_F(PullTest, NotGgufIsRejectedEarly) {
  Behaviour b;
  b.content = std::make_shared<const std::string>("<html><body>Please log in</body></html>" + std::string(100000, ' '));
  b.content_type = "text/html";
  server_.set("/login", b);
  auto m = manager();
  auto s = pull(*m, server_.url("/login"), "x");
  EXPECT_EQ(s.state, JobState::failed);
  EXPECT_NE(s.error.find("not a GGUF file (it starts with \"<htm\""), std::string::npos) << s.error;
  EXPECT_LT(server_.stats("/login").body_bytes, 100000u + 40);
  expect_no_model_visible();
  EXPECT_EQ(count_blob_files(store_->layout()), 0u);
}

TEST_F(PullTest, ConcurrentPullsOfOneSourceDownloadOnce) {
  Behaviour b = model_route();
  b.stall_after = 100000;
  b.stall_ms = 300;
  server_.set("/m.gguf", b);
  auto m = manager();
  auto j1 = m->pull({server_.url("/m.gguf"), ""});
  auto j2 = m->pull({server_.url("/m.gguf"), ""});
  ASSERT_TRUE(j1.ok() && j2.ok());
  EXPECT_EQ(j1->get(), j2->get());
  ASSERT_EQ(wait_done(**j1).state, JobState::succeeded);
  EXPECT_EQ(server_.stats("/m.gguf").requests, 1);
  EXPECT_EQ(server_.stats("/m.gguf").body_bytes, model_->size());
  EXPECT_EQ(m->list().size(), 1u);
}

TEST_F(PullTest, CancelStopsAndDiscards) {
  Behaviour b = model_route();
  b.stall_after = 100000;
  b.stall_ms = 10000;
  server_.set("/m.gguf", b);
  auto m = manager();
  auto job = m->pull({server_.url("/m.gguf"), ""});
  ASSERT_TRUE(job.ok());
  auto s = (*job)->snapshot();
  for (int i = 0; i < 100 && (s.events.size() < 2 || s.events.back().completed < 100000); ++i)
    s = (*job)->wait(s.version, 100ms);
  ASSERT_TRUE(m->cancel((*job)->id()).ok());
  s = wait_done(**job, 5s);
  EXPECT_EQ(s.state, JobState::cancelled);
  expect_no_model_visible();
  EXPECT_EQ(count_blob_files(store_->layout()), 0u) << "the partial download is removed";
  EXPECT_EQ(m->cancel("pull-unknown").error().code, Code::not_found);
}

TEST_F(PullTest, KilledManagerResumesAfterRestart) {
  Behaviour b = model_route();
  b.stall_after = 400000;
  b.stall_ms = 20000;
  b.stall_times = 1;
  server_.set("/m.gguf", b);
  std::string home = dir_.path().string(), url = server_.url("/m.gguf");
  char* argv[] = {const_cast<char*>(NURL_PULL_HELPER), home.data(), url.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, NURL_PULL_HELPER, nullptr, nullptr, argv, environ), 0);
  // Wait (bounded) until the helper has 400000 bytes on disk, then kill it.
  uint64_t part_size = 0;
  for (int i = 0; i < 200 && part_size < 400000; ++i) {
    std::this_thread::sleep_for(50ms);
    for (auto& e : fs::directory_iterator(store_->layout().blobs()))
      if (e.path().extension() == ".part") part_size = fs::file_size(e.path());
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(part_size, 400000u);
  ASSERT_TRUE(store_->list().empty()) << "no partial model is visible";

  open_store();
  auto m = manager();
  ASSERT_TRUE(m->restore().ok());
  auto jobs = m->list();
  ASSERT_EQ(jobs.size(), 1u);
  auto job = m->find(jobs[0].id);
  auto s = wait_done(*job);
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  auto st = server_.stats("/m.gguf");
  EXPECT_EQ(st.range_starts, (std::vector<int64_t>{-1, 400000}));
  EXPECT_EQ(st.body_bytes, model_->size()) << "only the missing tail is transferred after the restart";
  EXPECT_EQ(store_->resolve("m")->manifest.digest, golden_digest());

  // A second restart lists the finished job without running it again.
  m.reset();
  auto m2 = manager();
  ASSERT_TRUE(m2->restore().ok());
  ASSERT_EQ(m2->list().size(), 1u);
  EXPECT_EQ(m2->list()[0].state, JobState::succeeded);
  EXPECT_EQ(server_.stats("/m.gguf").requests, 2);
}

TEST_F(PullTest, LocalFile) {
  auto m = manager();
  auto s = pull(*m, test::model_file("stories260K.gguf").string(), "local:v1");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(store_->resolve("local:v1")->manifest.digest, golden_digest());
}

// Re-pulls: the oracle is the test server's own count of requests, 304s and body bytes it sent.
TEST_F(PullTest, RePullOfAnUnchangedSourceTransfersNoBody) {
  Behaviour b = model_route();
  b.etag = "\"v1\"";
  b.last_modified = "Tue, 01 Dec 2026 10:00:00 GMT";
  server_.set("/m.gguf", b);
  auto m = manager();
  ASSERT_EQ(pull(*m, server_.url("/m.gguf")).state, JobState::succeeded);
  auto first = store_->resolve("m");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->manifest.validators.value("etag", ""), "\"v1\"");
  EXPECT_EQ(first->manifest.validators.value("last_modified", ""), b.last_modified);

  auto s = pull(*m, server_.url("/m.gguf"));
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(statuses(s), (std::vector<std::string>{"pulling manifest", "pulling <digest>", "up to date", "success"}));
  auto st = server_.stats("/m.gguf");
  EXPECT_EQ(st.requests, 2);
  EXPECT_EQ(st.not_modified, 1);
  EXPECT_EQ(st.body_bytes, model_->size()) << "the re-pull sent body bytes";
  EXPECT_EQ(store_->resolve("m")->manifest.digest, golden_digest());
  EXPECT_EQ(count_blob_files(store_->layout()), 1u) << "no .part left by the conditional request";

  // Last-Modified alone is enough for a server without ETags.
  Behaviour dated = model_route();
  dated.last_modified = "Mon, 30 Nov 2026 08:00:00 GMT";
  server_.set("/dated.gguf", dated);
  ASSERT_EQ(pull(*m, server_.url("/dated.gguf")).state, JobState::succeeded);
  ASSERT_EQ(pull(*m, server_.url("/dated.gguf")).state, JobState::succeeded);
  EXPECT_EQ(server_.stats("/dated.gguf").not_modified, 1);
  EXPECT_EQ(server_.stats("/dated.gguf").body_bytes, model_->size());
}

TEST_F(PullTest, ServerIgnoringConditionalsStopsAtTheSameETag) {
  // A model with 48 MiB of trailing padding: far more than the socket buffers hold, so the
  // server's count shows where the client hung up.
  Behaviour b;
  b.content = std::make_shared<const std::string>(*model_ + std::string(48 << 20, '\0'));
  b.etag = "\"same\"";
  b.conditional = false;  // answers 200 with the whole body every time
  server_.set("/m.gguf", b);
  auto m = manager();
  ASSERT_EQ(pull(*m, server_.url("/m.gguf")).state, JobState::succeeded);
  const uint64_t size = b.content->size();
  auto s = pull(*m, server_.url("/m.gguf"));
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(s.events[s.events.size() - 2].status, "up to date");
  // The transfer is abandoned at the head; only what the kernel buffered left the server.
  EXPECT_LT(server_.stats("/m.gguf").body_bytes, size + size / 3);
  EXPECT_EQ(store_->list().size(), 1u);
}

TEST_F(PullTest, ChangedSourceIsDownloadedAgainAndTheOldBlobCollected) {
  Behaviour b = model_route();
  b.etag = "\"v1\"";
  server_.set("/m.gguf", b);
  auto m = manager();
  ASSERT_EQ(pull(*m, server_.url("/m.gguf"), "me/m:v").state, JobState::succeeded);
  // The same model file with a changed byte in the padding after the header: a new digest.
  std::string changed = *model_;
  changed.back() = char(changed.back() ^ 1);
  b.content = std::make_shared<const std::string>(changed);
  b.etag = "\"v2\"";
  server_.set("/m.gguf", b);
  auto s = pull(*m, server_.url("/m.gguf"), "me/m:v");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  auto r = store_->resolve("me/m:v");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  {
    std::ofstream(dir_ / "changed.gguf", std::ios::binary) << changed;
  }
  EXPECT_EQ(r->manifest.digest, test::sha256sum(dir_ / "changed.gguf"));
  EXPECT_EQ(r->manifest.validators.value("etag", ""), "\"v2\"");
  EXPECT_FALSE(store_->has_blob(golden_digest())) << "the old blob is collected once unreferenced";
  EXPECT_EQ(count_blob_files(store_->layout()), 1u);
  EXPECT_EQ(server_.stats("/m.gguf").body_bytes, 2 * model_->size());
}

TEST_F(PullTest, OldBlobStaysWhileAnotherNameUsesIt) {
  Behaviour b = model_route();
  b.etag = "\"v1\"";
  server_.set("/m.gguf", b);
  auto m = manager();
  ASSERT_EQ(pull(*m, server_.url("/m.gguf"), "me/m:v").state, JobState::succeeded);
  ASSERT_TRUE(store_->copy(*parse_model_name("me/m:v"), *parse_model_name("me/keep:v")).ok());
  std::string changed = *model_;
  changed.back() = char(changed.back() ^ 1);
  b.content = std::make_shared<const std::string>(changed);
  b.etag = "\"v2\"";
  server_.set("/m.gguf", b);
  ASSERT_EQ(pull(*m, server_.url("/m.gguf"), "me/m:v").state, JobState::succeeded);
  EXPECT_TRUE(store_->has_blob(golden_digest()));
  EXPECT_EQ(store_->resolve("me/keep:v")->manifest.digest, golden_digest());
}

// A small tmpfs for disk-full and read-only cases; needs CAP_SYS_ADMIN (root in CI containers).
class TmpfsMount {
 public:
  TmpfsMount(const fs::path& dir, const char* opts) : dir_(dir) {
    fs::create_directories(dir);
    ok_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts) == 0;
  }
  ~TmpfsMount() {
    if (ok_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool ok() const { return ok_; }
  bool remount_readonly() { return ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0; }

 private:
  fs::path dir_;
  bool ok_ = false;
};

TEST_F(PullTest, DiskFullAndReadOnlyStoreFailClearly) {
  server_.set("/m.gguf", model_route());
  TmpfsMount small(dir_ / "small", "size=600k");
  if (!small.ok()) GTEST_SKIP() << "cannot mount a tmpfs here (needs CAP_SYS_ADMIN)";
  {
    auto st = Store::open(StoreLayout::at(dir_ / "small"));
    ASSERT_TRUE(st.ok());
    JobManager m(**st, cfg_, log_);
    auto s = pull(m, server_.url("/m.gguf"));
    EXPECT_EQ(s.state, JobState::failed);
    EXPECT_NE(s.error.find("disk full"), std::string::npos) << s.error;
    EXPECT_TRUE((*st)->list().empty());
  }
  TmpfsMount ro(dir_ / "ro", "size=4m");
  ASSERT_TRUE(ro.ok());
  auto st = Store::open(StoreLayout::at(dir_ / "ro"));
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(ro.remount_readonly());
  JobManager m(**st, cfg_, log_);
  auto s = pull(m, server_.url("/m.gguf"));
  EXPECT_EQ(s.state, JobState::failed);
  EXPECT_NE(s.error.find("permission denied"), std::string::npos) << s.error;
  EXPECT_TRUE((*st)->list().empty());
}

class HfPullTest : public PullTest {
 protected:
  void SetUp() override {
    PullTest::SetUp();
    cfg_.hf_endpoint = "http://127.0.0.1:" + std::to_string(server_.port());
    cfg_.hf_token = "hf_secret";
    for (const char* q : {"Q4_K_M", "Q8_0"}) {
      std::string stem = std::string("llama-tok512-") + q;
      auto g = test::golden_model(stem);
      listing_.push_back({{"type", "file"}, {"path", "tiny-" + std::string(q) + ".gguf"},
                          {"size", 1234}, {"oid", "gitsha"},
                          {"lfs", {{"oid", g["sha256"]}, {"size", g["size_bytes"]}, {"pointerSize", 134}}}});
      Behaviour b;
      b.content = read_all(test::model_file(stem + ".gguf"));
      server_.set("/org/repo/resolve/main/tiny-" + std::string(q) + ".gguf", b);
    }
    listing_.push_back({{"type", "file"}, {"path", "README.md"}, {"size", 10}});
    listing_.push_back({{"type", "file"}, {"path", "mmproj-tiny-Q8_0.gguf"}, {"size", 10}});
    set_listing(listing_);
  }
  void set_listing(const nlohmann::json& j) {
    Behaviour l;
    l.content = std::make_shared<const std::string>(j.dump());
    l.content_type = "application/json";
    server_.set("/api/models/org/repo/tree/main", l);
  }
  nlohmann::json listing_ = nlohmann::json::array();
};

TEST_F(HfPullTest, QuantTagPicksTheFileAndSendsTheToken) {
  auto m = manager();
  auto s = pull(*m, "hf.co/org/repo:Q8_0");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  auto r = store_->resolve("hf.co/org/repo:Q8_0");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->manifest.digest, "sha256:" + test::golden_model("llama-tok512-Q8_0")["sha256"].get<std::string>());
  EXPECT_EQ(r->manifest.details.quantization_level, "Q8_0");
  EXPECT_EQ(server_.stats("/api/models/org/repo/tree/main").authorization[0], "Bearer hf_secret");
  EXPECT_EQ(server_.stats("/org/repo/resolve/main/tiny-Q8_0.gguf").authorization[0], "Bearer hf_secret");
  EXPECT_EQ(s.events[1].digest, r->manifest.digest) << "progress names the expected digest";

  // "latest" prefers Q4_K_M; the file form needs no listing.
  s = pull(*m, "hf.co/org/repo");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(store_->resolve("hf.co/org/repo:latest")->manifest.details.quantization_level, "Q4_K_M");
  s = pull(*m, "hf.co/org/repo/tiny-Q8_0.gguf");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(server_.stats("/api/models/org/repo/tree/main").requests, 2);
  EXPECT_EQ(store_->list().size(), 3u);
}

TEST_F(HfPullTest, GatedRepoWithoutTokenSaysSo) {
  Behaviour gated;
  gated.status = 401;
  server_.set("/api/models/org/repo/tree/main", gated);
  cfg_.hf_token.clear();
  auto m = manager();
  auto s = pull(*m, "hf.co/org/repo:Q8_0");
  EXPECT_EQ(s.state, JobState::failed);
  EXPECT_NE(s.error.find("HF_TOKEN"), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("gated"), std::string::npos) << s.error;
  server_.set("/org/repo/resolve/main/tiny-Q8_0.gguf", gated);
  s = pull(*m, "hf.co/org/repo/tiny-Q8_0.gguf");
  EXPECT_EQ(s.state, JobState::failed);
  EXPECT_NE(s.error.find("HF_TOKEN"), std::string::npos) << s.error;
  expect_no_model_visible();
}

TEST_F(HfPullTest, DigestMismatchAndMissingQuant) {
  listing_[1]["lfs"]["oid"] = std::string(64, 'a');
  set_listing(listing_);
  auto m = manager();
  auto s = pull(*m, "hf.co/org/repo:Q8_0");
  EXPECT_EQ(s.state, JobState::failed);
  EXPECT_NE(s.error.find("digest mismatch"), std::string::npos) << s.error;
  s = pull(*m, "hf.co/org/repo:Q2_K");
  EXPECT_EQ(s.state, JobState::failed);
  EXPECT_NE(s.error.find("no .gguf file for quant Q2_K"), std::string::npos) << s.error;
  expect_no_model_visible();
  EXPECT_EQ(count_blob_files(store_->layout()), 0u);
}

TEST_F(HfPullTest, RePullComparesTheListingDigestWithoutDownloading) {
  auto m = manager();
  ASSERT_EQ(pull(*m, "hf.co/org/repo:Q8_0").state, JobState::succeeded);
  const std::string file = "/org/repo/resolve/main/tiny-Q8_0.gguf";
  uint64_t sent = server_.stats(file).body_bytes;
  auto s = pull(*m, "hf.co/org/repo:Q8_0");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(s.events[s.events.size() - 2].status, "up to date");
  EXPECT_EQ(server_.stats(file).requests, 1) << "the file itself is not asked for again";
  EXPECT_EQ(server_.stats(file).body_bytes, sent);
  EXPECT_EQ(server_.stats("/api/models/org/repo/tree/main").requests, 2);

  // A new upload to the repository (another LFS digest) is pulled again.
  auto q4 = test::golden_model("llama-tok512-Q4_K_M");
  listing_[1]["lfs"] = {{"oid", q4["sha256"]}, {"size", q4["size_bytes"]}};
  set_listing(listing_);
  Behaviour b;
  b.content = read_all(test::model_file("llama-tok512-Q4_K_M.gguf"));
  server_.set(file, b);
  s = pull(*m, "hf.co/org/repo:Q8_0");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(store_->resolve("hf.co/org/repo:Q8_0")->manifest.digest, "sha256:" + q4["sha256"].get<std::string>());
  EXPECT_EQ(server_.stats(file).requests, 2);
}

TEST_F(HfPullTest, RePullOfAFileAsksTheHubWithAHead) {
  // The hub's resolve answer names the LFS file's sha256 (X-Linked-Etag) and the commit.
  auto g = test::golden_model("llama-tok512-Q8_0");
  const std::string file = "/org/repo/resolve/main/tiny-Q8_0.gguf";
  Behaviour b;
  b.content = read_all(test::model_file("llama-tok512-Q8_0.gguf"));
  b.headers = {{"X-Linked-Etag", "\"" + g["sha256"].get<std::string>() + "\""}, {"X-Repo-Commit", "abc123"}};
  server_.set(file, b);
  auto m = manager();
  ASSERT_EQ(pull(*m, "hf.co/org/repo/tiny-Q8_0.gguf").state, JobState::succeeded);
  auto first = store_->resolve("hf.co/org/repo/tiny-Q8_0.gguf");
  ASSERT_TRUE(first.ok()) << first.error().msg;
  EXPECT_EQ(first->manifest.validators.value("linked_etag", ""), g["sha256"].get<std::string>());
  EXPECT_EQ(first->manifest.validators.value("repo_commit", ""), "abc123");
  uint64_t sent = server_.stats(file).body_bytes;

  auto s = pull(*m, "hf.co/org/repo/tiny-Q8_0.gguf");
  ASSERT_EQ(s.state, JobState::succeeded) << s.error;
  EXPECT_EQ(s.events[s.events.size() - 2].status, "up to date");
  EXPECT_EQ(server_.stats(file).head_requests, 1);
  EXPECT_EQ(server_.stats(file).body_bytes, sent);
  EXPECT_EQ(server_.stats(file).authorization.back(), "Bearer hf_secret");
}

TEST(PullPlan, Sources) {
  struct Case {
    const char* source;
    const char* name;
    bool ok;
    const char* want_name;
  };
  for (Case c : {Case{"https://example.com/models/Tiny-Model.Q4_K_M.gguf?download=1", "", true, "tiny-model.q4_k_m:latest"},
                 Case{"http://127.0.0.1:9/x.gguf", "me/x:v2", true, "me/x:v2"},
                 Case{"hf.co/org/repo:Q4_0", "", true, "hf.co/org/repo:Q4_0"},
                 Case{"/tmp/My Model.gguf", "", true, "my-model:latest"},
                 Case{"llama3", "", false, ""},
                 Case{"https://example.com/x.gguf", "../../etc", false, ""},
                 Case{"../x:y", "", true, "x-y:latest"}}) {
    auto p = plan_pull({c.source, c.name});
    EXPECT_EQ(p.ok(), c.ok) << c.source;
    if (p.ok() && c.ok) {
      EXPECT_EQ(p->name.display(), c.want_name) << c.source;
    }
  }
}

}  // namespace
}  // namespace nurl
