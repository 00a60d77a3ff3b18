// BlobWriter (see blob-writer.h).
#include "store/blob-writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "store/fs-util.h"
#include "store/store.h"

namespace nurl {

Result<BlobWriter> BlobWriter::create(Store& store, WriteFn write) {
  auto tmp = temp_path_in(store.layout().blobs());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error(errno, "creating", tmp);
  if (!write) write = [](int f, const void* d, size_t n) { return ::write(f, d, n); };
  return BlobWriter(store, fd, std::move(tmp), std::move(write));
}

BlobWriter::BlobWriter(BlobWriter&& o) noexcept
    : store_(o.store_), fd_(o.fd_), tmp_(std::move(o.tmp_)), write_(std::move(o.write_)), hash_(std::move(o.hash_)),
      size_(o.size_) {
  o.fd_ = -1;
  o.tmp_.clear();
}

BlobWriter::~BlobWriter() { discard(); }

void BlobWriter::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
}

Result<void> BlobWriter::write(std::span<const uint8_t> bytes) {
  if (fd_ < 0) return Error(Code::internal, "blob writer used after it ended");
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  while (n > 0) {
    ssize_t w = write_(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      Error e = errno_error(errno, "writing", tmp_);
      discard();
      return e;
    }
    p += w;
    n -= size_t(w);
  }
  hash_.update(bytes);
  size_ += bytes.size();
  return ok();
}

Result<std::string> BlobWriter::commit(const std::string& expected) {
  if (fd_ < 0) return Error(Code::internal, "blob writer used after it ended");
  std::string got = hash_.finish();
  if (got != expected) {
    discard();
    return Error(Code::invalid_argument, "digest mismatch: the " + std::to_string(size_) + " bytes uploaded hash to " +
                                             got + ", not " + expected);
  }
  auto synced = fsync_fd(fd_, tmp_);
  ::close(fd_);
  fd_ = -1;
  if (!synced.ok()) {
    discard();
    return synced.error();
  }
  if (store_->has_blob(got)) {  // another upload of the same bytes won the race
    discard();
    return got;
  }
  if (auto r = store_->commit_blob(tmp_, got); !r.ok()) {
    discard();
    return r.error();
  }
  tmp_.clear();
  return got;
}

}  // namespace nurl
