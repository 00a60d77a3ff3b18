// POST /api/blobs/:digest through the real Server, Router and Store: bodies far past max_body
// stream to disk while hashed (the digest from coreutils' sha256sum is the oracle; the process's
// peak RSS stays far below the body), a mismatch is a 400 and a full disk (a small tmpfs, when
// this process may mount one) a 507, both leaving nothing; an existing blob answers at once.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <fstream>
#include <thread>

#include "http/server.h"
#include "jobs/job-manager.h"
#include "routes/models.h"
#include "store/store.h"
#include "support/oracles.h"
#include "support/raw-http.h"
#include "support/temp-dir.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

uint64_t peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6));
  return 0;
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

class UploadTest : public ::testing::Test {
 protected:
  void SetUp() override { start(dir_.path()); }
  void start(const fs::path& home) {
    auto s = Store::open(StoreLayout::at(home));
    ASSERT_TRUE(s.ok()) << s.error().msg;
    store_ = std::move(*s);
    ctx_.store = store_.get();
    router_ = std::make_unique<http::Router>();
    add_models_routes(*router_, ctx_);
    http::ServerLimits limits;
    limits.max_body_bytes = 1 << 20;
    server_ = std::make_unique<http::Server>(io_, *router_, limits, log_);
    ASSERT_TRUE(server_->listen_tcp({"127.0.0.1", 0}).ok());
    thread_ = std::thread([this] { io_.run(); });
  }
  void stop() {
    if (!server_) return;
    server_->stop();
    thread_.join();
    server_.reset();
    io_.restart();
  }
  void TearDown() override { stop(); }

  // Sends `file` as the body of POST /api/blobs/<digest> as curl does (Expect: 100-continue, the
  // body only after "100 Continue"); returns the final response.
  std::string upload(const fs::path& file, const std::string& digest, bool chunked = false) {
    int fd = test::connect_loopback(server_->tcp_port());
    std::string head = "POST /api/blobs/" + digest + " HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n" +
                       (chunked ? std::string("Transfer-Encoding: chunked\r\n")
                                : "Content-Length: " + std::to_string(fs::file_size(file)) + "\r\n") +
                       "\r\n";
    test::send_all(fd, head);
    std::string r = test::read_response(fd);
    if (test::status_of(r) == 100) {
      int in = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
      std::string buf(1 << 16, '\0');
      for (ssize_t n; (n = ::read(in, buf.data(), buf.size())) > 0;) {
        std::string piece = buf.substr(0, size_t(n));
        if (!test::send_all(fd, chunked ? test::chunk(piece) : piece)) break;
      }
      if (chunked) test::send_all(fd, "0\r\n\r\n");
      ::close(in);
      r = test::read_response(fd);
    }
    ::close(fd);
    return r;
  }

  test::TempDir dir_;
  Logger log_{[](LogLevel, std::string_view) {}};
  ConfigHolder config_{Config{}};
  RouteContext ctx_{log_, config_, nullptr};
  std::unique_ptr<Store> store_;
  std::unique_ptr<http::Router> router_;
  boost::asio::io_context io_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
};

TEST_F(UploadTest, LargeBodyStreamsToDiskWithBoundedMemory) {
  const uint64_t n = 128ull << 20;
  fs::path big = dir_ / "big.bin";
  {
    // Sparse but not all zeros: a few marks so a misplaced chunk changes the digest.
    int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_EQ(::ftruncate(fd, off_t(n)), 0);
    for (uint64_t off = 0; off < n; off += 7 << 20) ASSERT_EQ(::pwrite(fd, "mark", 4, off_t(off)), 4);
    ::close(fd);
  }
  const std::string digest = test::sha256sum(big);
  const uint64_t before = peak_rss_kib();
  std::string r = upload(big, digest);
  EXPECT_EQ(test::status_of(r), 201) << r;
  EXPECT_TRUE(store_->has_blob(digest));
  EXPECT_EQ(test::sha256sum(store_->blob_path(digest)), digest);
  EXPECT_LT(peak_rss_kib() - before, 48u << 10) << "the body must not be held in memory";
  // Again: the blob exists, so the answer comes without the body being read.
  r = upload(big, digest);
  EXPECT_EQ(test::status_of(r), 200) << r;
}

TEST_F(UploadTest, DigestMismatchIs400AndKeepsNothing) {
  fs::path f = dir_ / "f.bin";
  test::write_pattern_file(f, 3 << 20, 3);
  std::string r = upload(f, "sha256:" + std::string(64, 'a'));
  EXPECT_EQ(test::status_of(r), 400) << r;
  EXPECT_NE(r.find("digest mismatch"), std::string::npos) << r;
  EXPECT_NE(r.find(test::sha256sum(f)), std::string::npos) << "names what the body hashes to";
  EXPECT_TRUE(files_in(store_->layout().blobs()).empty());
  EXPECT_EQ(test::status_of(upload(f, "sha256:nothex")), 400);
}

// A small tmpfs as the store; needs CAP_SYS_ADMIN (root in CI containers), else skipped (the
// ENOSPC path itself is covered through BlobWriter's write seam in daemon_store_test).
class SmallDisk {
 public:
  explicit SmallDisk(const fs::path& dir) : dir_(dir) {
    fs::create_directories(dir);
    ok_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=4m") == 0;
  }
  ~SmallDisk() {
    if (ok_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool ok() const { return ok_; }

 private:
  fs::path dir_;
  bool ok_ = false;
};

TEST_F(UploadTest, FullDiskIs507AndKeepsNothing) {
  SmallDisk disk(dir_ / "small");
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a tmpfs here (needs CAP_SYS_ADMIN)";
  stop();
  start(dir_ / "small");
  // A chunked body announces no size: the disk fills up mid-way.
  fs::path f = dir_ / "f.bin";
  test::write_pattern_file(f, 3 << 20, 5);
  test::write_pattern_file(dir_ / "small" / "filler", 2 << 20, 6);
  std::string r = upload(f, test::sha256sum(f), /*chunked=*/true);
  EXPECT_EQ(test::status_of(r), 507) << r;
  EXPECT_NE(r.find("disk full"), std::string::npos) << r;
  EXPECT_TRUE(files_in(store_->layout().blobs()).empty());
  // Larger than the free space: refused before a byte is read.
  fs::remove(dir_ / "small" / "filler");
  test::write_pattern_file(f, 6 << 20, 7);
  r = upload(f, test::sha256sum(f));
  EXPECT_EQ(test::status_of(r), 507) << r;
  EXPECT_NE(r.find("not enough disk space"), std::string::npos) << r;
  EXPECT_TRUE(files_in(store_->layout().blobs()).empty());
}

}  // namespace
}  // namespace nurl
