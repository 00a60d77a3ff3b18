// MmapFile: a read-only memory map of a whole file. Move-only; unmaps on destruction.
// Model weights are read straight from this mapping (no copies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/error.h"

namespace nurl {

class MmapFile {
 public:
  static Result<MmapFile> open(const std::string& path);

  MmapFile() = default;
  MmapFile(MmapFile&& o) noexcept;
  MmapFile& operator=(MmapFile&& o) noexcept;
  MmapFile(const MmapFile&) = delete;
  MmapFile& operator=(const MmapFile&) = delete;
  ~MmapFile();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Drops the pages of [offset, offset + n) from this process's resident set (whole pages inside
  // the range); they stay readable and come back from the page cache when touched. Streaming
  // readers call it on what they have consumed so their memory stays one chunk, not one file.
  void release(size_t offset, size_t n) const;
  // Maps the file with small pages only from now on: a read of a few bytes then makes one 4 KiB
  // page resident, not a 2 MiB one (for mappings whose big parts were released).
  void small_pages() const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace nurl
