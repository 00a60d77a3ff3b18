// blob_upload (see blob-upload.h): an UploadSource reads the body while the previous chunk is
// written on its OffThread, then commits the blob there too (fsync + rename).
#include "routes/blob-upload.h"

#include <sys/statvfs.h>

#include <optional>
#include <vector>

#include "routes/off-thread.h"
#include "store/blob-writer.h"
#include "store/sha256.h"
#include "store/store.h"

namespace nurl {

namespace {

constexpr size_t kChunk = 1 << 20;

class UploadSource : public http::ChunkSource {
 public:
  UploadSource(Store& store, std::string digest, std::shared_ptr<http::BodyReader> body)
      : store_(store), digest_(std::move(digest)), body_(std::move(body)) {}

  boost::asio::awaitable<Result<std::optional<std::string>>> next() override {
    if (done_) co_return std::optional<std::string>{};
    done_ = true;
    std::optional<BlobWriter> writer;
    Error err;
    worker_.start([&] {
      auto w = BlobWriter::create(store_);
      if (w.ok()) writer.emplace(std::move(*w));
      else err = w.error();
    });
    co_await worker_.wait();
    if (!writer) co_return err;

    std::vector<uint8_t> bufs[2] = {std::vector<uint8_t>(kChunk), std::vector<uint8_t>(kChunk)};
    int cur = 0;
    bool pending = false;
    Result<void> wrote;
    while (true) {
      Result<size_t> n = Error(Code::cancelled, "upload cancelled");
      if (!cancelled_) n = co_await body_->read(reinterpret_cast<char*>(bufs[cur].data()), kChunk);
      if (pending) {  // the previous chunk's write, which ran while this one was read
        co_await worker_.wait();
        pending = false;
        if (!wrote.ok()) co_return wrote.error();
      }
      if (!n.ok()) co_return n.error();
      if (*n == 0) break;
      const size_t len = *n;
      const int idx = cur;
      worker_.start([&, len, idx] { wrote = writer->write({bufs[idx].data(), len}); });
      pending = true;
      cur ^= 1;
    }
    Result<std::string> committed = Error(Code::internal, "upload not committed");
    worker_.start([&] {
      committed = writer->commit(digest_);
      writer.reset();
    });
    co_await worker_.wait();
    if (!committed.ok()) co_return committed.error();
    co_return std::optional<std::string>{};  // 201, no body (as ollama)
  }

  void cancel() override { cancelled_ = true; }

 private:
  Store& store_;
  const std::string digest_;
  std::shared_ptr<http::BodyReader> body_;
  OffThread worker_;
  bool done_ = false;
  bool cancelled_ = false;
};

}  // namespace

http::Reply blob_upload(Store& store, const http::Request& req) {
  auto d = digest_hex(req.params.at("digest"));
  if (!d.ok()) return http::error_response(d.error());
  std::string digest = "sha256:" + *d;
  if (store.has_blob(digest)) return http::json_response(200, "{}");
  if (!req.body_reader) return http::error_response(Error(Code::internal, "upload route without a body stream"));
  if (auto len = req.body_reader->content_length()) {
    struct statvfs fs {};
    if (::statvfs(store.layout().blobs().c_str(), &fs) == 0) {
      uint64_t free_bytes = uint64_t(fs.f_bavail) * fs.f_frsize;
      if (*len > free_bytes)
        return http::error_response(Error(Code::no_space, "not enough disk space for the upload: " +
                                                              std::to_string(*len) + " bytes, " +
                                                              std::to_string(free_bytes) + " free in " +
                                                              store.layout().blobs().string()));
    }
  }
  http::Stream s;
  s.status = 201;
  s.content_type = "application/json; charset=utf-8";
  s.single = true;
  s.source = std::make_shared<UploadSource>(store, digest, req.body_reader);
  s.error_chunk = [](const Error& e) { return http::ndjson_error_line(e); };
  return s;
}

}  // namespace nurl
