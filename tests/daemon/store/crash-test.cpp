// Crash consistency: a child process hammers the store (create, copy, replace, remove) and is
// SIGKILLed at a random moment; the parent then reopens the store and checks that every listed
// model resolves and verifies, no temp file survives, and garbage collection leaves only
// referenced blobs. Repeated over many kill points.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <set>

#include "store/store.h"
#include "support/oracles.h"
#include "support/temp-dir.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void writer_loop(const StoreLayout& layout, const std::vector<fs::path>& sources) {
  auto store = Store::open(layout);
  if (!store.ok()) _exit(3);
  for (unsigned i = 0;; ++i) {  // runs until killed
    auto n = *parse_model_name("m" + std::to_string(i % 5));
    CreateOptions opt;
    opt.mode = ImportMode::copy;
    (void)(*store)->create(n, sources[i % sources.size()], opt);
    if (i % 3 == 0) (void)(*store)->copy(n, *parse_model_name("copy:" + std::to_string(i % 4)));
    if (i % 4 == 1) (void)(*store)->remove(*parse_model_name("m" + std::to_string((i + 2) % 5)));
  }
}

TEST(StoreCrash, KilledWriterLeavesAConsistentStore) {
  NURL_REQUIRE_TESTDATA();
  test::TempDir dir;
  // Distinct blobs: the golden model with a few trailing bytes (GGUF ignores data past the tensors).
  std::vector<fs::path> sources;
  for (int v = 0; v < 3; ++v) {
    auto p = dir / ("src" + std::to_string(v) + ".gguf");
    fs::copy_file(test::model_file("stories260K.gguf"), p);
    std::ofstream(p, std::ios::app | std::ios::binary) << "variant" << v;
    sources.push_back(p);
  }
  auto layout = StoreLayout::at(dir / "home");
  std::mt19937 rng(42);
  int rounds_with_models = 0;
  for (int round = 0; round < 12; ++round) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) writer_loop(layout, sources);
    usleep(2000 + rng() % 60000);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited early with " << WEXITSTATUS(status);

    auto store = Store::open(layout);
    ASSERT_TRUE(store.ok()) << store.error().msg;
    std::vector<std::string> problems;
    auto models = (*store)->list(&problems);
    EXPECT_TRUE(problems.empty()) << problems.front();
    if (!models.empty()) ++rounds_with_models;
    std::set<std::string> referenced;
    for (const auto& m : models) {
      auto r = (*store)->resolve(m.name);
      ASSERT_TRUE(r.ok()) << "round " << round << ": " << r.error().msg;
      EXPECT_EQ(test::sha256sum(r->blob_path), m.digest) << m.name.display();
      referenced.insert(m.digest);
    }
    for (auto& e : fs::recursive_directory_iterator(layout.models))
      EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << e.path();
    (*store)->collect_garbage();
    for (auto& e : fs::directory_iterator(layout.blobs())) {
      std::string f = e.path().filename().string();
      ASSERT_EQ(f.rfind("sha256-", 0), 0u) << f;
      EXPECT_TRUE(referenced.count("sha256:" + f.substr(7))) << "unreferenced blob " << f;
    }
  }
  EXPECT_GT(rounds_with_models, 0) << "the writer never got a model in: kill points too early";
}

}  // namespace
}  // namespace nurl
