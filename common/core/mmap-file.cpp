#include "core/mmap-file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nurl {

Result<MmapFile> MmapFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Code c = errno == ENOENT ? Code::not_found : Code::io;
    return Error(c, path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return Error(Code::io, path + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(Code::invalid_argument, path + ": not a regular file");
  }
  MmapFile f;
  f.path_ = path;
  f.size_ = static_cast<size_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = mmap(nullptr, f.size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      return Error(Code::io, path + ": mmap: " + std::strerror(e));
    }
    f.data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return f;
}

void MmapFile::release(size_t offset, size_t n) const {
  if (!data_ || offset >= size_) return;
  n = std::min(n, size_ - offset);
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(data_) + offset + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(data_) + offset + n) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void MmapFile::small_pages() const {
  if (data_) madvise(const_cast<uint8_t*>(data_), size_, MADV_NOHUGEPAGE);
}

MmapFile::MmapFile(MmapFile&& o) noexcept : data_(o.data_), size_(o.size_), path_(std::move(o.path_)) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MmapFile& MmapFile::operator=(MmapFile&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(const_cast<uint8_t*>(data_), size_);
    data_ = o.data_;
    size_ = o.size_;
    path_ = std::move(o.path_);
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

MmapFile::~MmapFile() {
  if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace nurl
