// HttpTestServer: a small HTTP/1.1 file server on 127.0.0.1 for pull tests and benchmarks. Each
// path has a Behaviour (Range support, drop or stall mid-body, redirect, error status, a lying
// Content-Length, ETag and Last-Modified with conditional requests, extra headers) and counters
// (requests, HEAD requests, 304s, body bytes sent, Range starts). GET and HEAD. One thread per
// connection, Connection: close; the destructor shuts every socket and joins every thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nurl::test {

struct Behaviour {
  std::shared_ptr<const std::string> content;  // the body (or serve `file`)
  std::string file;                            // path served with pread (for big files)
  bool ranges = true;                          // honour "Range: bytes=N-" with 206
  int status = 200;                            // != 200: reply this status with a short body
  std::string location;                        // with 301/302/307: the Location header
  std::string etag;                            // sent as ETag when not empty
  std::string content_type = "application/octet-stream";
  uint64_t drop_after = UINT64_MAX;            // close after this many body bytes ...
  int drop_times = 0;                          // ... for this many responses (then behave)
  uint64_t stall_after = UINT64_MAX;           // stop sending after this many bytes ...
  int stall_ms = 0;                            // ... for this long (bounded; stop() interrupts)
  int stall_times = 1 << 30;                   // ... in this many responses
  int64_t length_delta = 0;                    // announce Content-Length + delta (a lying server)
  std::string last_modified;                   // sent as Last-Modified when not empty
  bool conditional = true;                     // answer If-None-Match / If-Modified-Since with 304
  std::vector<std::pair<std::string, std::string>> headers;  // extra response headers
};

struct ServedStats {
  int requests = 0;
  int head_requests = 0;
  int not_modified = 0;                        // 304 answers
  uint64_t body_bytes = 0;                     // bytes of body actually written to sockets
  std::vector<int64_t> range_starts;           // -1 for requests without Range
  std::vector<std::string> authorization;      // Authorization header of each request
};

class HttpTestServer {
 public:
  HttpTestServer();
  ~HttpTestServer();
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path) const;
  void set(const std::string& path, Behaviour b);
  ServedStats stats(const std::string& path) const;
  uint64_t total_body_bytes() const;

 private:
  void accept_loop();
  void serve(int fd);

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::map<std::string, Behaviour> routes_;
  std::map<std::string, ServedStats> stats_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace nurl::test
