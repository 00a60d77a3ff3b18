// Store behaviour against independent oracles: digests from coreutils' sha256sum and the golden
// JSON (size, sha256, architecture, tensor shapes) written by llama.cpp's tooling.
#include "store/store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "store/sha256.h"
#include "support/oracles.h"
#include "support/temp-dir.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

ModelName name(const char* s) { return *parse_model_name(s); }

size_t count_files(const fs::path& dir) {
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) ++n;
  return n;
}

TEST(StoreLayout, FromEnv) {
  struct Case {
    std::map<std::string, std::string> env;
    const char* home;
    const char* models;
  };
  const Case cases[] = {
      {{{"HOME", "/home/u"}}, "/home/u/.nurllama", "/home/u/.nurllama/models"},
      {{{"HOME", "/home/u"}, {"NURLLAMA_HOME", "/srv/n"}}, "/srv/n", "/srv/n/models"},
      {{{"HOME", "/root"}, {"STATE_DIRECTORY", "/var/lib/nurllama"}}, "/var/lib/nurllama",
       "/var/lib/nurllama/models"},
      {{{"HOME", "/home/u"}, {"OLLAMA_MODELS", "/data/ollama"}}, "/home/u/.nurllama", "/data/ollama"},
      {{{"HOME", "/home/u"}, {"OLLAMA_MODELS", "/data/o"}, {"NURLLAMA_MODELS", "/data/n"}},
       "/home/u/.nurllama", "/data/n"},
  };
  for (const auto& c : cases) {
    auto l = StoreLayout::from_env([&](const char* k) -> const char* {
      auto it = c.env.find(k);
      return it == c.env.end() ? nullptr : it->second.c_str();
    });
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(l->home, c.home);
    EXPECT_EQ(l->models, c.models);
  }
  EXPECT_FALSE(StoreLayout::from_env([](const char*) -> const char* { return nullptr; }).ok());
}

TEST(Sha256, KnownVectors) {
  // FIPS 180-2 test vectors.
  Sha256 h;
  h.update(std::string_view("abc"));
  EXPECT_EQ(h.finish(), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(h.finish(), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_TRUE(digest_hex("sha256-E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855").ok());
  EXPECT_FALSE(digest_hex("sha256:../../../../etc/passwd").ok());
  EXPECT_FALSE(digest_hex("md5:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855").ok());
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NURL_REQUIRE_TESTDATA();
    auto s = Store::open(StoreLayout::at(dir_.path()));
    ASSERT_TRUE(s.ok()) << s.error().msg;
    store_ = std::move(*s);
  }
  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, CreateFromLocalGgufMatchesGolden) {
  auto golden = test::golden_model("stories260K");
  ASSERT_TRUE(golden.is_object());
  for (ImportMode mode : {ImportMode::copy, ImportMode::link_or_copy}) {
    CreateOptions opt;
    opt.mode = mode;
    opt.system = "You are terse.";
    opt.parameters = {{"temperature", 0.5}};
    auto m = store_->create(name("tiny"), test::model_file("stories260K.gguf"), opt);
    ASSERT_TRUE(m.ok()) << m.error().msg;
    EXPECT_EQ(m->digest, "sha256:" + golden["sha256"].get<std::string>());
    EXPECT_EQ(m->size, golden["size_bytes"].get<uint64_t>());
    EXPECT_EQ(m->details.family, golden["architecture"].get<std::string>());
    uint64_t n_params = 0;
    for (auto& t : golden["tensors"]) {
      uint64_t n = 1;
      for (auto& d : t[2]) n *= d.get<uint64_t>();
      n_params += n;
    }
    char want[32];
    std::snprintf(want, sizeof want, "%.1fK", double(n_params) / 1e3);
    EXPECT_EQ(m->details.parameter_size, want);
    EXPECT_EQ(m->details.quantization_level, "F32");  // golden: every tensor F32

    auto r = store_->resolve("tiny");
    ASSERT_TRUE(r.ok()) << r.error().msg;
    EXPECT_EQ(test::sha256sum(r->blob_path), m->digest);
    EXPECT_EQ(r->manifest.system, "You are terse.");
    EXPECT_EQ(r->manifest.parameters["temperature"], 0.5);
    auto all = store_->list();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].name.display(), "tiny:latest");
  }
  EXPECT_EQ(count_files(store_->layout().blobs()), 1u);
}

TEST_F(StoreTest, QuantizationLevelFromFileType) {
  auto m = store_->create(name("q:q4km"), test::model_file("llama-tok512-Q4_K_M.gguf"), {});
  ASSERT_TRUE(m.ok()) << m.error().msg;
  EXPECT_EQ(m->details.quantization_level, "Q4_K_M");  // the file is named by its quant
  EXPECT_EQ(m->digest, test::sha256sum(test::model_file("llama-tok512-Q4_K_M.gguf")));
}

TEST_F(StoreTest, SharedBlobSurvivesUntilLastReference) {
  ASSERT_TRUE(store_->create(name("a"), test::model_file("stories260K.gguf"), {}).ok());
  auto c = store_->copy(name("a"), name("me/b:v2"));
  ASSERT_TRUE(c.ok()) << c.error().msg;
  auto blob = store_->resolve("a")->blob_path;
  ASSERT_EQ(store_->list().size(), 2u);

  ASSERT_TRUE(store_->remove(name("a")).ok());
  EXPECT_TRUE(fs::exists(blob)) << "blob still referenced by me/b:v2";
  EXPECT_FALSE(store_->resolve("a").ok());
  EXPECT_EQ(store_->resolve("a").error().code, Code::not_found);
  ASSERT_TRUE(store_->resolve("me/b:v2").ok());

  ASSERT_TRUE(store_->remove(name("me/b:v2")).ok());
  EXPECT_FALSE(fs::exists(blob));
  EXPECT_EQ(count_files(store_->layout().models), 0u);
  EXPECT_EQ(store_->remove(name("me/b:v2")).error().code, Code::not_found);
}

TEST_F(StoreTest, ReplacingANameCollectsTheOldBlob) {
  ASSERT_TRUE(store_->create(name("x"), test::model_file("stories260K.gguf"), {}).ok());
  auto old_blob = store_->resolve("x")->blob_path;
  ASSERT_TRUE(store_->create(name("x"), test::model_file("llama-tok512-Q4_0.gguf"), {}).ok());
  EXPECT_FALSE(fs::exists(old_blob));
  EXPECT_EQ(store_->resolve("x")->manifest.digest, test::sha256sum(test::model_file("llama-tok512-Q4_0.gguf")));
}

TEST_F(StoreTest, CorruptBlobIsNeverServedAndVerifyReportsDrift) {
  CreateOptions opt;
  opt.mode = ImportMode::copy;
  ASSERT_TRUE(store_->create(name("c"), test::model_file("stories260K.gguf"), opt).ok());
  auto blob = store_->resolve("c")->blob_path;
  auto v = store_->verify(name("c"));
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->ok());

  // A flipped byte deep inside: same size and header, so only verify can see it.
  {
    std::fstream f(blob, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100000);
    f.put('\x5a');
  }
  v = store_->verify(name("c"));
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->ok());
  EXPECT_EQ(v->actual_digest, test::sha256sum(blob));
  EXPECT_NE(v->actual_digest, v->expected_digest);

  // Damaged header: refused at resolve.
  {
    std::fstream f(blob, std::ios::in | std::ios::out | std::ios::binary);
    f.put('X');
  }
  auto r = store_->resolve("c");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::corrupt);
  EXPECT_NE(r.error().msg.find("not a GGUF"), std::string::npos) << r.error().msg;

  // Truncated: refused at resolve, naming both sizes.
  ASSERT_EQ(::truncate(blob.c_str(), 1000), 0);
  r = store_->resolve("c");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("has 1000 bytes"), std::string::npos) << r.error().msg;

  ::unlink(blob.c_str());
  EXPECT_EQ(store_->resolve("c").error().code, Code::corrupt);
  v = store_->verify(name("c"));
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->ok());
}

TEST_F(StoreTest, NonGgufIsRejectedWithoutTrace) {
  auto junk = dir_ / "page.gguf";
  std::ofstream(junk) << "<html>Access denied</html>";
  auto m = store_->create(name("junk"), junk, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, Code::corrupt);
  EXPECT_NE(m.error().msg.find("not a GGUF"), std::string::npos) << m.error().msg;

  // Valid magic, garbage after it: caught by the full header parse, blob not kept.
  std::ofstream(junk, std::ios::binary | std::ios::trunc) << std::string("GGUF\x03\0\0\0", 8)
                                                          << std::string(64, '\xff');
  m = store_->create(name("junk"), junk, {});
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(store_->list().empty());
  EXPECT_EQ(count_files(store_->layout().models), 0u);
}

TEST_F(StoreTest, CreateFromMissingBlobOrBadDigest) {
  EXPECT_EQ(store_->create_from_blob(name("m"), "sha256:" + std::string(64, 'a'), {}).error().code,
            Code::not_found);
  EXPECT_EQ(store_->create_from_blob(name("m"), "sha256:../../x", {}).error().code, Code::invalid_argument);
  EXPECT_EQ(store_->create(name("m"), dir_ / "nope.gguf", {}).error().code, Code::not_found);
}

TEST_F(StoreTest, ListSkipsForeignAndBrokenManifests) {
  ASSERT_TRUE(store_->create(name("good"), test::model_file("stories260K.gguf"), {}).ok());
  auto mdir = store_->layout().manifests();
  fs::create_directories(mdir / "registry.ollama.ai/library/bad");
  std::ofstream(mdir / "registry.ollama.ai/library/bad/latest") << "{not json";
  std::ofstream(mdir / "stray-at-top") << "{}";
  fs::create_directories(mdir / "registry.ollama.ai/library/evil");
  std::ofstream(mdir / "registry.ollama.ai/library/evil/x..y") << "{}";
  std::ofstream(mdir / "registry.ollama.ai/library/good/.tmp-123-abc") << "{}";
  std::vector<std::string> problems;
  auto all = store_->list(&problems);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name.display(), "good:latest");
  EXPECT_EQ(problems.size(), 3u);
  // Reopening removes stray temp files.
  auto s2 = Store::open(store_->layout());
  ASSERT_TRUE(s2.ok());
  EXPECT_FALSE(fs::exists(mdir / "registry.ollama.ai/library/good/.tmp-123-abc"));
}

TEST_F(StoreTest, HfNamesLiveUnderTheirOwnPath) {
  auto n = name("hf.co/org/repo/stories.gguf");
  ASSERT_TRUE(store_->create(n, test::model_file("stories260K.gguf"), {}).ok());
  EXPECT_TRUE(fs::exists(store_->layout().manifests() / "hf.co/org/repo/stories.gguf"));
  auto all = store_->list();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name.display(), "hf.co/org/repo/stories.gguf");
  EXPECT_TRUE(store_->resolve("hf.co/org/repo:stories.gguf").ok());
}

TEST_F(StoreTest, CollectGarbageRemovesOrphansOnly) {
  ASSERT_TRUE(store_->create(name("kept"), test::model_file("stories260K.gguf"), {}).ok());
  auto orphan = store_->import_file(test::model_file("llama-tok512-Q4_0.gguf"), ImportMode::copy);
  ASSERT_TRUE(orphan.ok());
  auto pinned = store_->import_file(test::model_file("llama-tok512-Q8_0.gguf"), ImportMode::copy);
  ASSERT_TRUE(pinned.ok());
  std::ofstream(store_->layout().blobs() / "job1.part") << "partial";
  {
    BlobPin p = store_->pin(*pinned);
    EXPECT_EQ(store_->collect_garbage(), 1u);
    EXPECT_TRUE(store_->has_blob(*pinned));
  }
  EXPECT_FALSE(store_->has_blob(*orphan));
  EXPECT_EQ(store_->collect_garbage(), 1u);
  EXPECT_TRUE(store_->resolve("kept").ok());
  EXPECT_TRUE(fs::exists(store_->layout().blobs() / "job1.part"));
}

// As in ollama, names are case-insensitive: every lookup finds the stored spelling, and writing
// a name that differs only in case replaces the model instead of adding a second one.
TEST_F(StoreTest, NamesAreCaseInsensitive) {
  ASSERT_TRUE(store_->create(name("stories260k"), test::model_file("stories260K.gguf"), {}).ok());
  auto r = store_->resolve("Stories260K");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->manifest.name.display(), "stories260k:latest");
  EXPECT_TRUE(store_->resolve("STORIES260K:LATEST").ok());
  EXPECT_TRUE(store_->resolve("library/Stories260k:Latest").ok());
  EXPECT_EQ(store_->read_manifest(name("Stories260K"))->name.display(), "stories260k:latest");
  auto v = store_->verify(name("STORIES260k"));
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->ok());
  EXPECT_EQ(v->name, "stories260k:latest");
  ASSERT_TRUE(store_->copy(name("Stories260K"), name("me/Copy:V1")).ok());
  EXPECT_TRUE(store_->resolve("ME/copy:v1").ok());

  // Same name, other case: replaced, not duplicated.
  ASSERT_TRUE(store_->create(name("STORIES260K"), test::model_file("llama-tok512-Q4_0.gguf"), {}).ok());
  auto all = store_->list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(store_->resolve("stories260k")->manifest.digest, test::sha256sum(test::model_file("llama-tok512-Q4_0.gguf")));
  EXPECT_EQ(store_->resolve("stories260k")->manifest.name.display(), "STORIES260K:latest");

  ASSERT_TRUE(store_->remove(name("Me/COPY:v1")).ok());
  ASSERT_TRUE(store_->remove(name("stories260K")).ok());
  EXPECT_TRUE(store_->list().empty());
  EXPECT_EQ(store_->resolve("stories260k").error().code, Code::not_found);
}

}  // namespace
}  // namespace nurl
