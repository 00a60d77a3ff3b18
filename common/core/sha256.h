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
  // "sha256:<hex>" of the bytes so far; the hasher goes on (checkpoints of a file being written).
  std::string peek() const;
  void reset();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// Hashes a file in 1 MiB reads. `on_progress(bytes_done)` is called after each read; returning
// false cancels (Code::cancelled).
struct HashedFile {
  std::string digest;
  uint64_t size = 0;
};
Result<HashedFile> hash_file(const std::filesystem::path& path,
                             const std::function<bool(uint64_t)>& on_progress = {});
// Feeds the file into `h` (for resuming an incremental hash): all of it, or its first `limit`
// bytes (an error when it is shorter); returns the bytes read.
Result<uint64_t> hash_file_into(Sha256& h, const std::filesystem::path& path,
                                const std::function<bool(uint64_t)>& on_progress = {},
                                uint64_t limit = UINT64_MAX);

// "sha256:<64 hex>" (also accepts "sha256-<64 hex>"); returns the 64 hex chars or an error.
Result<std::string> digest_hex(std::string_view digest);

}  // namespace nurl
