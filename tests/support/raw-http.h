// A raw-socket HTTP/1.1 client for tests that must control the framing byte by byte (Expect:
// 100-continue, chunked bodies, stalls, connection reuse). Blocking, 10 s receive timeout.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace nurl::test {

inline int connect_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(uint16_t(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

inline bool send_all(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

// One response: its head and Content-Length body ("" when the peer closed before a head).
inline std::string read_response(int fd) {
  std::string got;
  char buf[4096];
  size_t head_end = std::string::npos;
  while ((head_end = got.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return got;
    got.append(buf, size_t(n));
  }
  size_t cl = got.find("Content-Length: ");
  size_t len = cl == std::string::npos || cl > head_end ? 0 : std::stoul(got.substr(cl + 16));
  while (got.size() < head_end + 4 + len) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, size_t(n));
  }
  return got.substr(0, head_end + 4 + len);
}

inline int status_of(const std::string& response) {
  return response.size() >= 12 && response.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(response.substr(9, 3)) : 0;
}

// true when the peer has closed the connection (an orderly EOF).
inline bool closed_by_peer(int fd) {
  char c;
  return ::recv(fd, &c, 1, 0) == 0;
}

// Frames `piece` as one chunk of a chunked body.
inline std::string chunk(const std::string& piece) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "%zx\r\n", piece.size());
  return hex + piece + "\r\n";
}

}  // namespace nurl::test
