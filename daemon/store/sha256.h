// Incremental SHA-256 (OpenSSL EVP) and a streaming file hasher. Digests are written the way the
// API speaks them: "sha256:<64 lower-case hex>"; blob files are named "sha256-<hex>".
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/error.h"

namespace nurl {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void update(std::span<const uint8_t> bytes);
  void update(std::string_view s) { update({reinterpret_cast<const uint8_t*>(s.data()), s.size()}); }
  // "sha256:<hex>"; the hasher restarts afterwards.
  std::string finish();
  void reset();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// Hashes the first `limit` bytes (all when limit is UINT64_MAX) of a file in 1 MiB reads.
// `on_progress(bytes_done)` is called after each read; returning false cancels (Code::cancelled).
struct HashedFile {
  std::string digest;
  uint64_t size = 0;
};
Result<HashedFile> hash_file(const std::filesystem::path& path,
                             const std::function<bool(uint64_t)>& on_progress = {});
// Feeds the whole file into `h` (for resuming an incremental hash); returns the bytes read.
Result<uint64_t> hash_file_into(Sha256& h, const std::filesystem::path& path,
                                const std::function<bool(uint64_t)>& on_progress = {});

// "sha256:<64 hex>" (also accepts "sha256-<64 hex>"); returns the 64 hex chars or an error.
Result<std::string> digest_hex(std::string_view digest);

}  // namespace nurl
