// OutputFile: hashing, checkpoints and resume around gguf::Writer (see output-file.h).
#include "engine/convert/output-file.h"

#include <system_error>

namespace nurl::convert {

namespace {

// Whether the partial file's first rp.file_offset bytes are the ones rp describes.
bool prefix_matches(const std::filesystem::path& partial, const ResumePoint& rp, Sha256& h) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(partial, ec)) return false;
  if (!hash_file_into(h, partial, {}, rp.file_offset).ok()) return false;
  auto hex = digest_hex(h.peek());
  return hex.ok() && *hex == rp.prefix_sha256;
}

}  // namespace

OutputFile::OutputFile(OutputFile&&) noexcept = default;
OutputFile& OutputFile::operator=(OutputFile&&) noexcept = default;
OutputFile::~OutputFile() = default;

Result<OutputFile> OutputFile::open(gguf::Writer& w, const std::filesystem::path& out,
                                    const std::optional<ResumePoint>& resume,
                                    std::function<void(const ResumePoint&)> on_checkpoint) {
  OutputFile f;
  f.w_ = &w;
  f.on_checkpoint_ = std::move(on_checkpoint);
  NURL_TRY(w.file_size());  // computes the layout (offsets) and reports declaration errors
  const size_t n_tensors = w.tensors().size();
  if (resume && resume->tensors_done > 0 && size_t(resume->tensors_done) <= n_tensors &&
      resume->file_offset == w.tensor_file_offset(size_t(resume->tensors_done))) {
    auto h = std::make_unique<Sha256>();
    const std::filesystem::path partial = out.string() + ".partial";
    if (prefix_matches(partial, *resume, *h) && w.resume(out.string(), size_t(resume->tensors_done)).ok()) {
      f.hash_ = std::move(h);
      f.first_ = f.done_ = size_t(resume->tensors_done);
    }
  }
  if (!f.hash_) {
    f.hash_ = std::make_unique<Sha256>();
    Sha256* hp = f.hash_.get();
    w.set_observer([hp](std::span<const uint8_t> b) { hp->update(b); });
    NURL_TRY(w.begin(out.string()));
  } else {
    Sha256* hp = f.hash_.get();
    w.set_observer([hp](std::span<const uint8_t> b) { hp->update(b); });
  }
  return f;
}

Result<void> OutputFile::write(std::span<const uint8_t> bytes) {
  NURL_TRY(w_->write(bytes));
  if (w_->tensors_written() > done_) {
    done_ = w_->tensors_written();
    NURL_TRY(w_->flush());
    checkpoint();
  }
  return {};
}

void OutputFile::checkpoint() {
  if (!on_checkpoint_) return;
  ResumePoint rp;
  rp.tensors_done = int(done_);
  rp.file_offset = w_->tensor_file_offset(done_);
  auto hex = digest_hex(hash_->peek());
  rp.prefix_sha256 = hex.ok() ? *hex : "";
  on_checkpoint_(rp);
}

Result<void> OutputFile::finish() { return w_->finish(); }

void OutputFile::abandon(bool keep_partial) {
  if (keep_partial) (void)w_->abandon_keep_partial();
  // Otherwise the writer removes the partial file when it is destroyed.
}

}  // namespace nurl::convert
