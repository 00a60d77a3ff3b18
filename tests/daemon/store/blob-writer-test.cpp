// BlobWriter: the bytes land under their digest (coreutils sha256sum is the oracle); a mismatch,
// a full disk (injected through the write seam: ENOSPC) or an abandoned writer keeps nothing.
#include "store/blob-writer.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>

#include "store/store.h"
#include "support/oracles.h"
#include "support/temp-dir.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;

size_t files_in(const fs::path& dir) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

class BlobWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::open(StoreLayout::at(dir_.path()));
    ASSERT_TRUE(s.ok());
    store_ = std::move(*s);
    test::write_pattern_file(dir_ / "data.bin", 3 << 20, 7);
    std::ifstream in(dir_ / "data.bin", std::ios::binary);
    data_.assign(std::istreambuf_iterator<char>(in), {});
    digest_ = test::sha256sum(dir_ / "data.bin");
  }
  Result<std::string> write_all(BlobWriter& w) {
    for (size_t off = 0; off < data_.size(); off += 100000) {
      size_t n = std::min<size_t>(100000, data_.size() - off);
      NURL_TRY(w.write({reinterpret_cast<const uint8_t*>(data_.data()) + off, n}));
    }
    return std::string();
  }
  test::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::string data_, digest_;
};

TEST_F(BlobWriterTest, StreamsIntoTheContentAddress) {
  auto w = BlobWriter::create(*store_);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(write_all(*w).ok());
  EXPECT_EQ(w->size(), data_.size());
  auto d = w->commit(digest_);
  ASSERT_TRUE(d.ok()) << d.error().msg;
  EXPECT_EQ(*d, digest_);
  EXPECT_EQ(test::sha256sum(store_->blob_path(digest_)), digest_);
  EXPECT_EQ(files_in(store_->layout().blobs()), 1u);
}

TEST_F(BlobWriterTest, DigestMismatchKeepsNothing) {
  auto w = BlobWriter::create(*store_);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(write_all(*w).ok());
  auto d = w->commit("sha256:" + std::string(64, '0'));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, Code::invalid_argument);
  EXPECT_NE(d.error().msg.find("digest mismatch"), std::string::npos) << d.error().msg;
  EXPECT_NE(d.error().msg.find(digest_), std::string::npos) << "names what the bytes hash to";
  EXPECT_EQ(files_in(store_->layout().blobs()), 0u);
}

TEST_F(BlobWriterTest, FullDiskIsNoSpaceAndKeepsNothing) {
  size_t budget = 1 << 20;  // the "disk" takes 1 MiB, then ENOSPC
  auto w = BlobWriter::create(*store_, [&](int fd, const void* p, size_t n) -> ssize_t {
    if (budget == 0) {
      errno = ENOSPC;
      return -1;
    }
    size_t k = std::min(n, budget);
    budget -= k;
    return ::write(fd, p, k);
  });
  ASSERT_TRUE(w.ok());
  auto r = write_all(*w);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::no_space);
  EXPECT_EQ(http_status(r.error().code), 507);
  EXPECT_NE(r.error().msg.find("disk full"), std::string::npos) << r.error().msg;
  EXPECT_EQ(files_in(store_->layout().blobs()), 0u) << "the temp file is gone at once";
  EXPECT_FALSE(w->commit(digest_).ok());
}

TEST_F(BlobWriterTest, AbandonedWriterKeepsNothing) {
  {
    auto w = BlobWriter::create(*store_);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(write_all(*w).ok());
    EXPECT_EQ(files_in(store_->layout().blobs()), 1u);
  }
  EXPECT_EQ(files_in(store_->layout().blobs()), 0u);
}

}  // namespace
}  // namespace nurl
