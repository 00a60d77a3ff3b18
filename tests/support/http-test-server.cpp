// HttpTestServer (see the header). Deliberately simple: blocking sockets, one request per
// connection, every loop bounded by the request size limit or the body length.
#include "support/http-test-server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace nurl::test {

HttpTestServer::HttpTestServer() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(listen_fd_, 64);
  socklen_t len = sizeof a;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

HttpTestServer::~HttpTestServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  {
    std::lock_guard lk(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : threads_) t.join();
}

std::string HttpTestServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

void HttpTestServer::set(const std::string& path, Behaviour b) {
  std::lock_guard lk(mu_);
  routes_[path] = std::move(b);
}

ServedStats HttpTestServer::stats(const std::string& path) const {
  std::lock_guard lk(mu_);
  auto it = stats_.find(path);
  return it == stats_.end() ? ServedStats{} : it->second;
}

uint64_t HttpTestServer::total_body_bytes() const {
  std::lock_guard lk(mu_);
  uint64_t n = 0;
  for (auto& [p, s] : stats_) n += s.body_bytes;
  return n;
}

void HttpTestServer::accept_loop() {
  while (!stopping_) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stopping_) return;
      continue;
    }
    std::lock_guard lk(mu_);
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

namespace {

bool send_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

void HttpTestServer::serve(int fd) {
  // Read the request head (bounded).
  std::string req;
  char buf[4096];
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < 16384) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    req.append(buf, size_t(n));
  }
  std::string method, path, range, auth, if_none_match, if_modified_since;
  {
    size_t sp1 = req.find(' '), sp2 = req.find(' ', sp1 + 1);
    if (sp1 != std::string::npos) method = req.substr(0, sp1);
    if (sp1 != std::string::npos && sp2 != std::string::npos) path = req.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = req.find("\r\n");
    while (pos != std::string::npos && pos + 2 < req.size()) {
      size_t end = req.find("\r\n", pos + 2);
      if (end == std::string::npos) break;
      std::string line = req.substr(pos + 2, end - pos - 2);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string k = lower(line.substr(0, colon)), v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(' '));
        if (k == "range") range = v;
        if (k == "authorization") auth = v;
        if (k == "if-none-match") if_none_match = v;
        if (k == "if-modified-since") if_modified_since = v;
      }
      pos = end;
    }
  }

  Behaviour b;
  bool found = false;
  int response_index = 0;
  int64_t range_start = -1;
  if (range.rfind("bytes=", 0) == 0) range_start = std::strtoll(range.c_str() + 6, nullptr, 10);
  {
    std::lock_guard lk(mu_);
    auto it = routes_.find(path);
    found = it != routes_.end();
    if (found) b = it->second;
    auto& st = stats_[path];
    response_index = st.requests++;
    if (method == "HEAD") ++st.head_requests;
    st.range_starts.push_back(range_start);
    st.authorization.push_back(auth);
  }

  auto body_bytes = [&](uint64_t off, size_t n, char* out) -> size_t {
    if (b.content) {
      n = std::min<uint64_t>(n, b.content->size() - off);
      std::memcpy(out, b.content->data() + off, n);
      return n;
    }
    int f = ::open(b.file.c_str(), O_RDONLY | O_CLOEXEC);
    ssize_t r = f >= 0 ? ::pread(f, out, n, off_t(off)) : -1;
    if (f >= 0) ::close(f);
    return r > 0 ? size_t(r) : 0;
  };
  uint64_t size = 0;
  if (b.content) size = b.content->size();
  else if (!b.file.empty()) {
    int f = ::open(b.file.c_str(), O_RDONLY | O_CLOEXEC);
    if (f >= 0) { size = uint64_t(::lseek(f, 0, SEEK_END)); ::close(f); }
  }

  std::string head;
  uint64_t start = 0;
  // If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
  bool unchanged = found && b.status == 200 && b.conditional &&
                   (!if_none_match.empty() ? (!b.etag.empty() && if_none_match == b.etag)
                                           : (!if_modified_since.empty() && if_modified_since == b.last_modified));
  std::string extra;
  for (const auto& [k, v] : b.headers) extra += k + ": " + v + "\r\n";
  if (!b.etag.empty()) extra += "ETag: " + b.etag + "\r\n";
  if (!b.last_modified.empty()) extra += "Last-Modified: " + b.last_modified + "\r\n";
  if (unchanged) {
    head = "HTTP/1.1 304 Not Modified\r\nConnection: close\r\n" + extra + "\r\n";
    send_all(fd, head.data(), head.size());
    std::lock_guard lk(mu_);
    ++stats_[path].not_modified;
  } else if (!found || b.status != 200) {
    int status = found ? b.status : 404;
    std::string msg = "{\"error\":\"status " + std::to_string(status) + "\"}";
    head = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: " + std::to_string(msg.size()) +
           "\r\nConnection: close\r\n";
    if (!b.location.empty()) head += "Location: " + b.location + "\r\n";
    if (found) head += extra;
    head += "\r\n" + msg;
    send_all(fd, head.data(), head.size());
  } else {
    bool partial = b.ranges && range_start >= 0;
    if (partial && uint64_t(range_start) >= size) {
      head = "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */" + std::to_string(size) +
             "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      send_all(fd, head.data(), head.size());
    } else {
      if (partial) start = uint64_t(range_start);
      uint64_t n = size - start;
      int64_t announced = int64_t(n) + b.length_delta;
      head = partial ? "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + std::to_string(start) + "-" +
                           std::to_string(size - 1) + "/" + std::to_string(size) + "\r\n"
                     : std::string("HTTP/1.1 200 OK\r\n");
      head += "Content-Length: " + std::to_string(announced) + "\r\nContent-Type: " + b.content_type +
              "\r\nConnection: close\r\n";
      if (b.ranges) head += "Accept-Ranges: bytes\r\n";
      head += extra + "\r\n";
      if (send_all(fd, head.data(), head.size()) && method != "HEAD") {
        uint64_t limit = std::min<uint64_t>(n, announced < 0 ? 0 : uint64_t(announced));
        if (response_index < b.drop_times) limit = std::min(limit, b.drop_after);
        std::vector<char> chunk(1 << 16);
        bool stalled = false;
        for (uint64_t sent = 0; sent < limit && !stopping_;) {
          if (!stalled && sent >= b.stall_after && response_index < b.stall_times) {
            stalled = true;
            for (int ms = 0; ms < b.stall_ms && !stopping_; ms += 10)
              std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
          uint64_t want = std::min<uint64_t>(chunk.size(), limit - sent);
          if (!stalled && response_index < b.stall_times && b.stall_after > sent) want = std::min(want, b.stall_after - sent);
          size_t got = body_bytes(start + sent, size_t(want), chunk.data());
          if (got == 0 || !send_all(fd, chunk.data(), got)) break;
          sent += got;
          std::lock_guard lk(mu_);
          stats_[path].body_bytes += got;
        }
      }
    }
  }
  ::shutdown(fd, SHUT_RDWR);
  std::lock_guard lk(mu_);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::close(fd);
}

}  // namespace nurl::test
