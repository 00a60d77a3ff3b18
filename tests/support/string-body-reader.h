// A BodyReader over a string, for route tests that dispatch without a socket: what the server's
// streamed body gives a Body::streamed route, in reads of at most `step` bytes.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>

#include "http/message.h"

namespace nurl::test {

class StringBodyReader : public http::BodyReader {
 public:
  explicit StringBodyReader(std::string body, size_t step = 1 << 16) : body_(std::move(body)), step_(step) {}
  boost::asio::awaitable<Result<size_t>> read(char* buf, size_t n) override {
    n = std::min({n, step_, body_.size() - pos_});
    std::memcpy(buf, body_.data() + pos_, n);
    pos_ += n;
    co_return n;
  }
  std::optional<uint64_t> content_length() const override { return body_.size(); }

 private:
  std::string body_;
  size_t step_;
  size_t pos_ = 0;
};

}  // namespace nurl::test
