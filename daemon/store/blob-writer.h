// BlobWriter: streams bytes into a new blob of the store without holding them in memory: a temp
// file in blobs/ (".tmp-*", removed by Store::open after a crash), hashed as it is written.
// commit() checks the digest the uploader announced, fsyncs and renames the file to its content
// address; anything not committed is removed. Disk full is Code::no_space (HTTP 507).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

#include "core/error.h"
#include "store/sha256.h"

namespace nurl {

class Store;

class BlobWriter {
 public:
  // The write(2) the writer calls: a seam for tests that inject ENOSPC or EIO.
  using WriteFn = std::function<ssize_t(int fd, const void* data, size_t n)>;

  static Result<BlobWriter> create(Store& store, WriteFn write = {});
  BlobWriter(BlobWriter&& o) noexcept;
  BlobWriter& operator=(BlobWriter&&) = delete;
  BlobWriter(const BlobWriter&) = delete;
  ~BlobWriter();

  Result<void> write(std::span<const uint8_t> bytes);
  uint64_t size() const { return size_; }
  // Ends the blob: its digest must equal `expected` ("sha256:<hex>"), else Code::invalid_argument
  // and nothing is kept. Returns the digest. An existing blob with that digest is left as it is.
  Result<std::string> commit(const std::string& expected);

 private:
  BlobWriter(Store& store, int fd, std::filesystem::path tmp, WriteFn write)
      : store_(&store), fd_(fd), tmp_(std::move(tmp)), write_(std::move(write)) {}
  void discard();

  Store* store_;
  int fd_ = -1;
  std::filesystem::path tmp_;
  WriteFn write_;
  Sha256 hash_;
  uint64_t size_ = 0;
};

}  // namespace nurl
