// Round trip: every GGUF in testdata/models and testdata/vocab (written by llama.cpp's tools) is
// read, written back with gguf::Writer (streaming, to a temporary file) and compared byte by byte
// with the original. The comparison streams both files in 1 MiB chunks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"
#include "testdata.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> gguf_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(test::testdata(dir)))
    if (e.path().extension() == ".gguf") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Empty when equal; otherwise where the files first differ.
std::string compare_files(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) return "cannot open";
  std::vector<char> ba(1 << 20), bb(1 << 20);
  uint64_t at = 0;
  for (;;) {
    fa.read(ba.data(), std::streamsize(ba.size()));
    fb.read(bb.data(), std::streamsize(bb.size()));
    const auto na = size_t(fa.gcount()), nb = size_t(fb.gcount());
    const size_t n = std::min(na, nb);
    for (size_t i = 0; i < n; ++i)
      if (ba[i] != bb[i]) return "first difference at offset " + std::to_string(at + i);
    if (na != nb) return "sizes differ after offset " + std::to_string(at + n);
    if (na == 0) return "";
    at += na;
  }
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("nurl-gguf-roundtrip-" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void round_trip_all(const std::string& dir, size_t min_files) {
  const auto files = gguf_files(dir);
  ASSERT_GE(files.size(), min_files) << "too few GGUF files in " << test::testdata(dir);
  TempDir tmp;
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    auto f = gguf::File::open(path);
    ASSERT_TRUE(f.ok()) << f.error().msg;
    const std::string out = tmp.file("copy.gguf");
    auto r = gguf::copy_file(*f, out);
    ASSERT_TRUE(r.ok()) << r.error().msg;
    EXPECT_EQ(fs::file_size(out), fs::file_size(path));
    EXPECT_EQ(compare_files(path, out), "");
    fs::remove(out);
  }
}

TEST(GgufRoundTrip, Models) {
  NURL_REQUIRE_TESTDATA();
  round_trip_all("models", 20);
}

TEST(GgufRoundTrip, Vocab) {
  NURL_REQUIRE_TESTDATA();
  round_trip_all("vocab", 12);
}

}  // namespace
}  // namespace nurl
