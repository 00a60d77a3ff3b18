// The output of a conversion or quantisation: a gguf::Writer streamed to `out + ".partial"` with a
// running SHA-256 of everything written, a ResumePoint after every completed tensor, and resuming
// a partial file when its bytes prove it intact. Shared by convert_checkpoint and quantize_model.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <span>

#include "core/error.h"
#include "core/sha256.h"
#include "engine/convert/convert.h"
#include "engine/gguf/gguf-writer.h"

namespace nurl::convert {

class OutputFile {
 public:
  // Starts writing `w` (its declarations complete) to out + ".partial". With a resume point the
  // partial file is kept when its first resume->file_offset bytes hash to resume->prefix_sha256,
  // its header equals w's and the offset is that of a tensor boundary; writing then goes on after
  // resume->tensors_done tensors. Otherwise it starts from the beginning (resumed() says which).
  static Result<OutputFile> open(gguf::Writer& w, const std::filesystem::path& out,
                                 const std::optional<ResumePoint>& resume,
                                 std::function<void(const ResumePoint&)> on_checkpoint);
  OutputFile(OutputFile&&) noexcept;
  OutputFile& operator=(OutputFile&&) noexcept;
  ~OutputFile();

  size_t first_tensor() const { return first_; }  // the first tensor still to write
  bool resumed() const { return first_ > 0; }

  // Bytes of the current tensor (through the writer); after a tensor's last byte, the checkpoint.
  Result<void> write(std::span<const uint8_t> bytes);
  // Renames the finished file into place.
  Result<void> finish();
  // Stops: the partial file is removed, or kept for a later resume.
  void abandon(bool keep_partial);

 private:
  OutputFile() = default;
  void checkpoint();

  gguf::Writer* w_ = nullptr;
  std::unique_ptr<Sha256> hash_;
  size_t first_ = 0;
  size_t done_ = 0;  // tensors completed (checkpointed)
  std::function<void(const ResumePoint&)> on_checkpoint_;
};

}  // namespace nurl::convert
