// HttpClient: the client's only way to reach nurllamad. Speaks HTTP/1.1 over the daemon's Unix
// socket (default) or TCP when NURLLAMA_HOST / OLLAMA_HOST is set. JSON in, JSON (or NDJSON
// lines) out. Streaming callbacks may return false to hang up, which makes the daemon stop the
// generation (it watches for disconnects).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nurl::client {

struct Endpoint {
  std::string unix_socket;  // non-empty: talk over this socket
  std::string base_url;     // "http://127.0.0.1:11434" (also used as the URL authority over the socket)
  std::string describe() const;
};

// Where the daemon is: NURLLAMA_HOST or OLLAMA_HOST (host:port, scheme optional) → TCP;
// otherwise the control socket: $NURLLAMA_SOCKET, else the user's daemon's socket
// (api/service-paths.h) if it exists, else the system service's /run/nurllama/nurllamad.sock if it
// exists (or exists but is closed to us), else the user's path.
Endpoint resolve_endpoint();

// What to do when the daemon cannot be reached there: start it (the service, or `nurllama
// serve`), or join the nurllama group when the system socket refuses us.
std::string unreachable_hint(const Endpoint& ep);

struct Response {
  long status = 0;
  std::string body;
  nlohmann::json json() const;  // parsed body, or null when it is not JSON
};

class HttpClient {
 public:
  explicit HttpClient(Endpoint ep);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  const Endpoint& endpoint() const { return ep_; }

  // One request, the whole body in memory. Connection failures return Code::io with a message
  // that says how to start the daemon.
  Result<Response> request(const std::string& method, const std::string& path,
                           const std::optional<nlohmann::json>& body = std::nullopt);

  // NDJSON streaming: on_line gets each parsed object as it arrives; returning false hangs up
  // (Code::cancelled). An HTTP error status returns the daemon's {"error": ...} message.
  Result<void> stream(const std::string& method, const std::string& path, const nlohmann::json& body,
                      const std::function<bool(const nlohmann::json&)>& on_line);

  // Uploads a file as the request body (for /api/blobs/:digest).
  Result<Response> upload(const std::string& path, const std::string& file);

 private:
  Endpoint ep_;
  void* curl_ = nullptr;  // CURL*, reused so keep-alive works across calls
};

// The daemon's {"error": "..."} text, or a generic "HTTP <status>" message.
std::string error_text(const Response& r);

}  // namespace nurl::client
