// The HTTP/1.1 server: TCP and Unix-socket listeners, one coroutine per connection, keep-alive,
// chunked streaming, and every socket-level defence (body limits, read/idle/write timeouts, a cap
// on connections). Requests go through handle_request(); the server only frames Replies.
// While a Stream is running, the connection is watched for EOF so a client that goes away
// cancels its work at once (the ChunkSource's cancel()).
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "http/pipeline.h"
#include "http/router.h"
#include "http/security.h"

namespace nurl::http {

struct ServerLimits {
  size_t max_header_bytes = 64 * 1024;
  // Large enough for chat requests with inline images; bulk uploads (blobs) need their own
  // limit per route (RouteLimits) and eventually a file-backed body.
  size_t max_body_bytes = 64ull << 20;
  std::chrono::seconds read_timeout{30};   // one request's header + body
  std::chrono::seconds idle_timeout{300};  // keep-alive wait for the next request
  std::chrono::seconds write_timeout{120}; // one write (a slow reader stalls no worker forever)
  size_t max_connections = 512;
};

// Who may use a Unix socket: decides Peer::trusted from the kernel's credentials.
using PeerAuth = std::function<bool(int uid, int gid)>;

class Server {
 public:
  Server(boost::asio::io_context& io, const Router& router, ServerLimits limits, Logger& log);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  Result<void> listen_tcp(const HostPort& where);
  // Creates the parent directory (0755 unless it exists), replaces a stale socket, chmods 0660.
  Result<void> listen_unix(const std::string& path, PeerAuth auth);
  // Serves a socket that is already bound and listening, handed over by the service manager
  // (socket activation); the server takes ownership of fd. A Unix socket adopted this way is
  // not removed on stop (its owner, the socket unit, keeps it).
  Result<void> adopt_tcp(int fd);
  Result<void> adopt_unix(int fd, PeerAuth auth);
  // What the server listens on: "127.0.0.1:11434", "unix:/run/nurllama/nurllamad.sock".
  std::vector<std::string> listening() const;

  // The bound TCP port (useful when listening on port 0); 0 before listen_tcp.
  int tcp_port() const;
  // Replaced atomically on config reload.
  void set_policy(Policy p);

  // Stop accepting; end running streams (their sources are cancelled and write a final error
  // line); close idle connections. Safe from any thread. io.run() returns once all are gone.
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace nurl::http
