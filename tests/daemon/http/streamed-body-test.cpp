// Body::streamed routes through the real Server on loopback, spoken to with raw sockets so the
// HTTP framing is explicit: a body far past max_body streams through (Content-Length and
// chunked), buffered routes keep their limit, 100 Continue goes out only when the route reads,
// a route that refuses without reading closes the connection, a full read keeps it alive, and
// a stalled body ends with the read timeout. The oracle for the bytes is the sender's own count
// and checksum.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <thread>

#include "http/server.h"
#include "support/raw-http.h"

namespace nurl::http {
namespace {

using namespace std::chrono_literals;
using test::closed_by_peer;
using test::read_response;
using test::send_all;

// Reads the whole streamed body, then answers {"bytes":N,"sum":S}.
class SinkSource : public ChunkSource {
 public:
  SinkSource(std::shared_ptr<BodyReader> body, std::atomic<int>* errors) : body_(std::move(body)), errors_(errors) {}
  boost::asio::awaitable<Result<std::optional<std::string>>> next() override {
    if (done_) co_return std::optional<std::string>{};
    done_ = true;
    std::vector<char> buf(1 << 16);
    uint64_t bytes = 0, sum = 0;
    while (true) {
      auto n = co_await body_->read(buf.data(), buf.size());
      if (!n.ok()) {
        ++*errors_;
        co_return n.error();
      }
      if (*n == 0) break;
      for (size_t i = 0; i < *n; ++i) sum += static_cast<unsigned char>(buf[i]);
      bytes += *n;
    }
    co_return std::optional<std::string>("{\"bytes\":" + std::to_string(bytes) + ",\"sum\":" + std::to_string(sum) + "}");
  }
  void cancel() override {}

 private:
  std::shared_ptr<BodyReader> body_;
  std::atomic<int>* errors_;
  bool done_ = false;
};

class StreamedBodyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.add("POST", "/sink", [this](const Request& q) -> Reply {
      Stream s;
      s.single = true;
      s.content_type = "application/json";
      s.source = std::make_shared<SinkSource>(q.body_reader, &errors_);
      return s;
    }, Access::any, Body::streamed);
    router_.add("POST", "/refuse", [](const Request&) -> Reply { return error_response(403, "no"); }, Access::any,
                Body::streamed);
    router_.add("POST", "/small", [](const Request& q) -> Reply {
      return json_response(200, std::to_string(q.body.size()));
    });
    router_.add("GET", "/ping", [](const Request&) -> Reply { return json_response(200, "\"pong\""); });
    ServerLimits limits;
    limits.max_body_bytes = 1 << 20;
    limits.read_timeout = 1s;
    server_ = std::make_unique<Server>(io_, router_, limits, log_);
    ASSERT_TRUE(server_->listen_tcp({"127.0.0.1", 0}).ok());
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }

  int connect_() { return test::connect_loopback(server_->tcp_port()); }
  // Sends `n` bytes of a pattern; returns their byte sum.
  static uint64_t send_pattern(int fd, uint64_t n, bool chunked) {
    std::string block(1 << 16, '\0');
    for (size_t i = 0; i < block.size(); ++i) block[i] = char(i * 131 + 7);
    uint64_t sum = 0;
    for (uint64_t off = 0; off < n;) {
      size_t k = size_t(std::min<uint64_t>(block.size(), n - off));
      for (size_t i = 0; i < k; ++i) sum += static_cast<unsigned char>(block[i]);
      std::string piece = block.substr(0, k);
      if (!send_all(fd, chunked ? test::chunk(piece) : piece)) return 0;
      off += k;
    }
    if (chunked) send_all(fd, "0\r\n\r\n");
    return sum;
  }

  boost::asio::io_context io_;
  Logger log_{[](LogLevel, std::string_view) {}};
  Router router_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::atomic<int> errors_{0};
};

TEST_F(StreamedBodyTest, BodyFarPastMaxBodyStreamsThroughAndTheConnectionStaysOpen) {
  const uint64_t n = 32ull << 20;  // 32 MiB against a 1 MiB max_body
  int fd = connect_();
  ASSERT_TRUE(send_all(fd, "POST /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(n) + "\r\n\r\n"));
  uint64_t sum = send_pattern(fd, n, false);
  std::string r = read_response(fd);
  EXPECT_EQ(r.substr(0, 12), "HTTP/1.1 200") << r;
  EXPECT_NE(r.find("{\"bytes\":" + std::to_string(n) + ",\"sum\":" + std::to_string(sum) + "}"), std::string::npos) << r;
  ASSERT_TRUE(send_all(fd, "GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  EXPECT_NE(read_response(fd).find("\"pong\""), std::string::npos) << "keep-alive after a fully read body";
  ::close(fd);
}

TEST_F(StreamedBodyTest, ChunkedBodyStreamsThrough) {
  const uint64_t n = 5ull << 20;
  int fd = connect_();
  ASSERT_TRUE(send_all(fd, "POST /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"));
  uint64_t sum = send_pattern(fd, n, true);
  std::string r = read_response(fd);
  EXPECT_NE(r.find("{\"bytes\":" + std::to_string(n) + ",\"sum\":" + std::to_string(sum) + "}"), std::string::npos) << r;
  ::close(fd);
}

TEST_F(StreamedBodyTest, BufferedRoutesKeepTheirLimit) {
  int fd = connect_();
  ASSERT_TRUE(send_all(fd, "POST /small HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2000000\r\n\r\n"));
  EXPECT_EQ(read_response(fd).substr(0, 12), "HTTP/1.1 413");
  ::close(fd);
  fd = connect_();  // a chunked body past the limit too
  ASSERT_TRUE(send_all(fd, "POST /small HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"));
  send_pattern(fd, 2 << 20, true);
  EXPECT_EQ(read_response(fd).substr(0, 12), "HTTP/1.1 413");
  ::close(fd);
  fd = connect_();
  ASSERT_TRUE(send_all(fd, "POST /small HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello"));
  std::string r = read_response(fd);
  EXPECT_EQ(r.substr(r.size() - 1), "5") << r;
  ::close(fd);
}

TEST_F(StreamedBodyTest, ContinueIsSentOnlyWhenTheRouteReads) {
  // The route reads: 100 Continue first, then the body, then the answer.
  int fd = connect_();
  ASSERT_TRUE(send_all(fd, "POST /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(read_response(fd).substr(0, 12), "HTTP/1.1 100");
  ASSERT_TRUE(send_all(fd, "abc"));
  EXPECT_NE(read_response(fd).find("{\"bytes\":3,\"sum\":294}"), std::string::npos);
  ::close(fd);
  // The route refuses at once: the answer comes without 100 Continue, and the connection closes
  // (the body was never read, so it cannot carry another request).
  fd = connect_();
  ASSERT_TRUE(send_all(fd, "POST /refuse HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999999999\r\nExpect: 100-continue\r\n\r\n"));
  std::string r = read_response(fd);
  EXPECT_EQ(r.substr(0, 12), "HTTP/1.1 403") << r;
  EXPECT_NE(r.find("Connection: close"), std::string::npos) << r;
  EXPECT_TRUE(closed_by_peer(fd));
  ::close(fd);
}

TEST_F(StreamedBodyTest, StalledBodyEndsWithTheReadTimeout) {
  int fd = connect_();
  ASSERT_TRUE(send_all(fd, "POST /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n"));
  send_pattern(fd, 1000, false);
  auto t0 = std::chrono::steady_clock::now();
  std::string r = read_response(fd);  // the server gives up after read_timeout (1 s)
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(r.empty() || r.substr(0, 12) == "HTTP/1.1 500") << r;
  EXPECT_LT(waited, 8s);
  // The client can see the close before the route's coroutine has run on the failed read.
  for (int i = 0; i < 200 && errors_ == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(errors_, 1) << "the route saw the read fail";
  ::close(fd);
}

}  // namespace
}  // namespace nurl::http
