// SHA-256 over OpenSSL's EVP interface, plus streaming file hashing in fixed-size reads.
#include "core/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace nurl {

struct Sha256::Ctx {
  EVP_MD_CTX* md = nullptr;
  Ctx() : md(EVP_MD_CTX_new()) { EVP_DigestInit_ex(md, EVP_sha256(), nullptr); }
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const uint8_t> bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size());
}

void Sha256::reset() { EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr); }

namespace {

std::string final_digest(EVP_MD_CTX* md) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(md, out, &n);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "sha256:";
  for (unsigned i = 0; i < n; ++i) {
    s.push_back(kHex[out[i] >> 4]);
    s.push_back(kHex[out[i] & 15]);
  }
  return s;
}

}  // namespace

std::string Sha256::finish() {
  std::string s = final_digest(ctx_->md);
  reset();
  return s;
}

std::string Sha256::peek() const {
  EVP_MD_CTX* copy = EVP_MD_CTX_new();
  EVP_MD_CTX_copy_ex(copy, ctx_->md);
  std::string s = final_digest(copy);
  EVP_MD_CTX_free(copy);
  return s;
}

Result<uint64_t> hash_file_into(Sha256& h, const std::filesystem::path& path,
                                const std::function<bool(uint64_t)>& on_progress, uint64_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Code c = errno == ENOENT ? Code::not_found : Code::io;
    return Error(c, "hashing " + path.string() + ": " + std::strerror(errno));
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<uint8_t> buf(1 << 20);
  uint64_t total = 0;
  while (total < limit) {
    ssize_t n = ::read(fd, buf.data(), size_t(std::min<uint64_t>(buf.size(), limit - total)));
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return Error(Code::io, "reading " + path.string() + ": " + std::strerror(e));
    }
    if (n == 0) {
      if (limit == UINT64_MAX) break;
      ::close(fd);
      return Error(Code::corrupt, "hashing " + path.string() + ": the file ends at " + std::to_string(total) +
                                      " bytes, before " + std::to_string(limit));
    }
    h.update({buf.data(), size_t(n)});
    total += uint64_t(n);
    if (on_progress && !on_progress(total)) {
      ::close(fd);
      return Error(Code::cancelled, "hashing " + path.string() + ": cancelled");
    }
  }
  ::close(fd);
  return total;
}

Result<HashedFile> hash_file(const std::filesystem::path& path,
                             const std::function<bool(uint64_t)>& on_progress) {
  Sha256 h;
  NURL_ASSIGN(uint64_t n, hash_file_into(h, path, on_progress));
  return HashedFile{h.finish(), n};
}

Result<std::string> digest_hex(std::string_view d) {
  if (d.size() != 71 || d.substr(0, 6) != "sha256" || (d[6] != ':' && d[6] != '-'))
    return Error(Code::invalid_argument,
                 "invalid digest \"" + std::string(d.substr(0, 80)) + "\": expected sha256:<64 hex digits>");
  std::string hex(d.substr(7));
  for (char& c : hex) {
    if (c >= 'A' && c <= 'F') c = char(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return Error(Code::invalid_argument, "invalid digest \"" + std::string(d) + "\": not hexadecimal");
  }
  return hex;
}

}  // namespace nurl
