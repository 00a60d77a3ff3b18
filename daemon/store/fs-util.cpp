// Crash-safe file primitives (see fs-util.h).
#include "store/fs-util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace nurl {

Error errno_error(int err, const std::string& what, const std::filesystem::path& path) {
  std::string msg = what + " " + path.string() + ": " + std::strerror(err);
  Code code = Code::io;
  if (err == ENOSPC || err == EDQUOT) {
    msg += " (disk full: free space and retry; partial pulls resume)";
    code = Code::no_space;
  }
  else if (err == EACCES || err == EPERM || err == EROFS)
    msg += " (permission denied: check the owner of the model store or set NURLLAMA_HOME)";
  else if (err == ENOENT) code = Code::not_found;
  return Error(code, msg);
}

Result<void> make_dirs(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return errno_error(ec.value(), "creating directory", dir);
  return ok();
}

Result<void> fsync_fd(int fd, const std::filesystem::path& path) {
  if (::fsync(fd) != 0) return errno_error(errno, "fsync", path);
  return ok();
}

Result<void> fsync_dir(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "opening directory", dir);
  auto r = fsync_fd(fd, dir);
  ::close(fd);
  return r;
}

std::filesystem::path temp_path_in(const std::filesystem::path& dir) {
  std::random_device rd;
  std::uniform_int_distribution<uint64_t> dist;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*s%d-%016llx", int(kTempPrefix.size()), kTempPrefix.data(),
                int(::getpid()), static_cast<unsigned long long>(dist(rd)));
  return dir / buf;
}

Result<void> write_all(int fd, const void* data, size_t n, const std::filesystem::path& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, "writing", path);
    }
    p += w;
    n -= size_t(w);
  }
  return ok();
}

Result<void> rename_durable(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return errno_error(errno, "renaming to", to);
  return fsync_dir(to.parent_path());
}

Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view data, unsigned mode) {
  auto dir = path.parent_path();
  NURL_TRY(make_dirs(dir));
  auto tmp = temp_path_in(dir);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return errno_error(errno, "creating", tmp);
  ::fchmod(fd, static_cast<mode_t>(mode));  // exact bits, whatever the umask
  auto r = write_all(fd, data.data(), data.size(), tmp);
  if (r.ok()) r = fsync_fd(fd, tmp);
  ::close(fd);
  if (r.ok()) r = rename_durable(tmp, path);
  if (!r.ok()) ::unlink(tmp.c_str());
  return r;
}

Result<std::string> read_small_file(const std::filesystem::path& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "opening", path);
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return errno_error(e, "reading", path);
    }
    if (n == 0) break;
    out.append(buf, size_t(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return Error(Code::corrupt, path.string() + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return out;
}

}  // namespace nurl
