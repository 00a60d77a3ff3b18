// The socket-free shapes every route speaks: Request in, Reply out. A Reply is either a complete
// Response or a Stream whose chunks the server pulls and frames (chunked transfer encoding).
// Handlers never see sockets, timeouts or limits; those live in http/server.cpp only.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/error.h"

namespace nurl::http {

// Where a request came from. Unix-socket peers carry kernel-checked credentials (SO_PEERCRED).
struct Peer {
  bool unix_socket = false;
  bool trusted = false;       // unix peer authorised for control routes (same uid, root, group)
  std::string address;        // "127.0.0.1:54321" or "unix:uid=1000"
  int uid = -1, gid = -1, pid = -1;
};

// The body of a request to a Body::streamed route, pulled from the connection on demand. Use it
// only from the route's reply (a Stream's ChunkSource::next(), on the connection's executor) and
// only while that reply runs; afterwards reads fail. The server answers 100 Continue on the first
// read, so a handler that refuses the request early spares the client the upload.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // Reads up to `n` bytes into `buf`: the count, 0 at the end of the body, or an Error (the peer
  // went away, stalled past the read timeout, or sent a malformed body).
  virtual boost::asio::awaitable<Result<size_t>> read(char* buf, size_t n) = 0;
  // The announced Content-Length, or nullopt for a chunked body.
  virtual std::optional<uint64_t> content_length() const = 0;
};

struct Request {
  std::string method;                          // "GET", "POST", ...
  std::string target;                          // raw target: "/api/tags?x=1"
  std::string path;                            // target without the query
  std::string query;                           // after '?', undecoded
  std::map<std::string, std::string> headers;  // names lower-cased
  std::map<std::string, std::string> params;   // ":name" segments filled by the router
  std::string route;                           // the matched pattern ("/api/blobs/:digest"), "" if none
  std::string body;
  std::shared_ptr<BodyReader> body_reader;     // Body::streamed routes only (body stays empty)
  Peer peer;
  // Set by the pipeline from a valid `Authorization: Bearer` token ("" = none).
  std::string token_name;
  bool token_admin = false;

  // Header value or "" (name must be lower case).
  const std::string& header(const std::string& name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

// Produces a stream's chunks on the I/O executor. next() must never block: it awaits work that
// runs elsewhere (a model worker). An Error before the first chunk becomes the HTTP status and a
// JSON body; after it, the Stream's error_chunk is written as the last chunk.
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // The next chunk, nullopt at the end, or an Error (which also ends the stream).
  virtual boost::asio::awaitable<Result<std::optional<std::string>>> next() = 0;
  // The peer went away or the server is stopping: stop the work behind the stream now.
  // Called from the I/O executor, possibly while next() is suspended.
  virtual void cancel() = 0;
};

struct Stream {
  int status = 200;
  std::string content_type = "application/x-ndjson";
  std::shared_ptr<ChunkSource> source;
  // true: the source yields exactly one chunk, sent as a plain body with Content-Length
  // (used for stream:false, which still waits on a worker).
  bool single = false;
  // Frames an error that happens after the first chunk (NDJSON: {"error":...}\n; SSE: data:...).
  std::function<std::string(const Error&)> error_chunk;
  // The reply for an error before the first chunk (default: error_response; OpenAI and Anthropic
  // routes answer in their own error shape).
  std::function<Response(const Error&)> error_reply;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

using Reply = std::variant<Response, Stream>;

// {"error":"..."} with the status of the error's code.
Response error_response(const Error& e);
Response error_response(int status, const std::string& message);
Response json_response(int status, const std::string& json_text);
// The NDJSON error line: {"error":"..."}\n
std::string ndjson_error_line(const Error& e);

}  // namespace nurl::http
