#include "http/server.h"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <string_view>

#include "http/conn-table.h"

namespace nurl::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;
// Every accepted connection, TCP or Unix, as one stream type.
using Connection = beast::basic_stream<asio::generic::stream_protocol>;
using asio::awaitable;
using asio::use_awaitable;

namespace {

// Per-connection state shared with the stop callback and the disconnect watcher. Touched only
// on the connection's strand.
struct ConnState {
  bool alive = true;
  bool stopping = false;
  bool peer_gone = false;
  bool idle_wait = false;  // waiting for a keep-alive connection's next request
  bool evicted = false;    // closed to make room: no further request after this one
  int fd = -1;
  uint64_t watch_gen = 0;
  std::shared_ptr<ChunkSource> source;  // the running stream, if any
  std::function<void()> close;          // closes the socket (wakes a pending read)
};

std::string endpoint_text(const tcp::endpoint& ep) {
  auto a = ep.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(ep.port());
}

// The id the log gives a request: the client's X-Request-Id when it is short and plain,
// otherwise "<connection>-<request on it>".
std::string request_id_of(const Request& req, uint64_t conn, uint64_t n) {
  auto it = req.headers.find("x-request-id");
  if (it != req.headers.end() && !it->second.empty() && it->second.size() <= 64 &&
      std::all_of(it->second.begin(), it->second.end(),
                  [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; }))
    return it->second;
  return std::to_string(conn) + "-" + std::to_string(n);
}

bool peer_closed(int fd) {
  char c;
  ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return true;
  return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

// Responses go out as bytes composed here (status line, header fields, chunk framing) through
// one gathered asio::async_write: the bytes Beast's serializer wrote, but one write operation
// compiled instead of one per message type and call site (those were most of this file's build).
using Fields = std::vector<std::pair<std::string, std::string>>;

// A field name or value as written: without CR and LF, so nothing a route puts in a header can
// end the field or split the response.
std::string field_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    if (c != '\r' && c != '\n') out += c;
  return out;
}

// 1xx, 204 and 304 responses carry no body and no Content-Length (RFC 9110 §8.6, §15.3.5).
bool bodiless_status(int status) { return status < 200 || status == 204 || status == 304; }

// A response's status line and header fields.
class ResponseHead {
 public:
  ResponseHead(int status, const std::string& content_type, const Fields& headers, bool keep_alive) : status_(status) {
    if (!content_type.empty()) set("Content-Type", content_type);
    for (const auto& [k, v] : headers) set(k, v);
    if (!keep_alive) set("Connection", "close");
  }
  // Sets a field, replacing any of the same name (names compare without case).
  void set(std::string_view name, std::string_view value) {
    std::erase_if(fields_, [&](const auto& f) { return beast::iequals(f.first, name); });
    fields_.emplace_back(field_text(name), field_text(value));
  }
  std::string text() const {
    std::string out = "HTTP/1.1 " + std::to_string(status_) + " ";
    out += bhttp::obsolete_reason(static_cast<bhttp::status>(status_));
    out += "\r\n";
    for (const auto& [k, v] : fields_) out += k + ": " + v + "\r\n";
    out += "\r\n";
    return out;
  }

 private:
  int status_;
  Fields fields_;
};

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr std::string_view kLastChunk = "0\r\n\r\n";

// Writes a, b and c (any may be empty) in one write within `timeout`; false when the write
// failed (the client went away or stalled).
template <class Stream>
awaitable<bool> write_all(Stream& stream, std::chrono::steady_clock::duration timeout, std::string_view a,
                          std::string_view b = {}, std::string_view c = {}) {
  boost::system::error_code ec;
  const std::array<asio::const_buffer, 3> bufs{asio::buffer(a.data(), a.size()), asio::buffer(b.data(), b.size()),
                                               asio::buffer(c.data(), c.size())};
  stream.expires_after(timeout);
  co_await asio::async_write(stream, bufs, asio::redirect_error(use_awaitable, ec));
  co_return !ec;
}

// A chunk of a chunked body (RFC 9112 §7.1): its size in hex, CRLF, the data, CRLF. Empty data is
// no chunk (a zero-size chunk would end the body).
template <class Stream>
awaitable<bool> write_chunk(Stream& stream, std::chrono::steady_clock::duration timeout, const std::string& data) {
  if (data.empty()) co_return true;
  char size_line[24];
  int n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", data.size());
  const std::string_view size_text(size_line, static_cast<size_t>(n));
  co_return co_await write_all(stream, timeout, size_text, data, "\r\n");
}

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Impl> {
  asio::io_context& io;
  const Router& router;
  ServerLimits limits;
  Logger& log;
  RequestObserver observe;

  std::mutex mu;  // guards everything below
  Policy policy;
  bool stopping = false;
  std::vector<std::shared_ptr<tcp::acceptor>> tcp_acceptors;
  std::vector<std::shared_ptr<local::acceptor>> unix_acceptors;
  std::map<uint64_t, std::pair<asio::any_io_executor, std::weak_ptr<ConnState>>> conns;
  ConnectionTable table;
  int port = 0;
  std::string unix_path;
  std::vector<std::string> listen_desc;

  Impl(asio::io_context& i, const Router& r, ServerLimits l, Logger& lg, RequestObserver obs)
      : io(i), router(r), limits(l), log(lg), observe(std::move(obs)), table(conn_limits(l)) {}

  static ConnLimits conn_limits(const ServerLimits& l) {
    ConnLimits c;
    c.total = c.unix_total = l.max_connections;
    c.per_peer = l.max_connections_per_peer;
    c.reserve = std::min<size_t>(32, l.max_connections / 16);
    return c;
  }

  Policy current_policy() {
    std::lock_guard lk(mu);
    return policy;
  }

  // Registers a connection (closing idle keep-alive ones to make room, see ConnectionTable);
  // returns 0 with `why` set when it is refused or the server is stopping.
  uint64_t add_conn(asio::any_io_executor ex, std::shared_ptr<ConnState> st, const std::string& peer,
                    ConnectionTable::Origin origin, std::string* why) {
    std::lock_guard lk(mu);
    if (stopping) {
      *why = "server is shutting down";
      return 0;
    }
    auto a = table.admit(peer, origin);
    for (uint64_t victim : a.evict) {
      auto it = conns.find(victim);
      if (it == conns.end()) continue;
      auto weak = it->second.second;
      asio::post(it->second.first, [weak] {
        auto vs = weak.lock();
        if (!vs || !vs->alive) return;
        vs->evicted = true;
        if (vs->idle_wait && vs->close) vs->close();  // else it ends after the request it started
      });
    }
    if (a.id == 0) {
      *why = a.refusal;
      return 0;
    }
    conns.emplace(a.id, std::make_pair(ex, st));
    return a.id;
  }
  void set_conn_state(uint64_t id, ConnectionTable::State s) {
    std::lock_guard lk(mu);
    table.set_state(id, s);
  }
  void remove_conn(uint64_t id) {
    std::lock_guard lk(mu);
    conns.erase(id);
    table.remove(id);
  }

  void stop() {
    std::lock_guard lk(mu);
    if (stopping) return;
    stopping = true;
    for (auto& a : tcp_acceptors) asio::post(a->get_executor(), [a] { boost::system::error_code ec; a->close(ec); });
    for (auto& a : unix_acceptors) asio::post(a->get_executor(), [a] { boost::system::error_code ec; a->close(ec); });
    if (!unix_path.empty()) {
      std::error_code ec;
      std::filesystem::remove(unix_path, ec);
    }
    for (auto& [id, entry] : conns) {
      auto weak = entry.second;
      asio::post(entry.first, [weak] {
        auto st = weak.lock();
        if (!st || !st->alive) return;
        st->stopping = true;
        if (st->source) st->source->cancel();  // the stream ends with a final error line
        else if (st->close) st->close();       // idle: wake the pending read
      });
    }
  }

  // Where a connection comes from, for the connection caps: the peer's IP address (TCP) and
  // whether it is remote, loopback or a Unix socket.
  struct Origin {
    std::string ip;
    ConnectionTable::Origin origin = ConnectionTable::Origin::unix_socket;
  };
  template <class Socket>
  static Origin origin_of(Socket& sock) {
    Origin o;
    if constexpr (std::is_same_v<typename Socket::protocol_type, tcp>) {
      boost::system::error_code ec;
      auto addr = sock.remote_endpoint(ec).address();
      if (addr.is_v6() && addr.to_v6().is_v4_mapped()) addr = asio::ip::make_address_v4(asio::ip::v4_mapped, addr.to_v6());
      o.ip = ec ? "?" : addr.to_string();
      o.origin = (!ec && addr.is_loopback()) ? ConnectionTable::Origin::loopback : ConnectionTable::Origin::remote;
    }
    return o;
  }
  template <class Stream>
  awaitable<void> session(Stream stream, Peer peer, Origin where);
  template <class Stream>
  awaitable<bool> send_reply(Stream& stream, ConnState& st, const Request& req, Reply reply, bool keep_alive,
                             int* status_out);
  template <class Acceptor, class Make>
  awaitable<void> accept_loop(std::shared_ptr<Acceptor> acc, Make make_peer);
  void serve_tcp(std::shared_ptr<tcp::acceptor> acc);
  void serve_unix(std::shared_ptr<local::acceptor> acc, PeerAuth auth, const std::string& owned_path);
};

namespace {

template <class Stream>
void start_watch(Stream& stream, const std::shared_ptr<ConnState>& st) {
  // Wait for readability; EOF (or an error) while a stream runs means the client went away.
  uint64_t gen = ++st->watch_gen;
  beast::get_lowest_layer(stream).socket().async_wait(
      asio::socket_base::wait_read, [st, gen](boost::system::error_code ec) {
        if (ec || !st->alive || st->watch_gen != gen) return;
        if (peer_closed(st->fd)) {
          st->peer_gone = true;
          if (st->source) st->source->cancel();
        }
        // Otherwise the client pipelined its next request; it is read after this reply.
      });
}

template <class Stream>
void stop_watch(Stream& stream, const std::shared_ptr<ConnState>& st) {
  ++st->watch_gen;
  boost::system::error_code ec;
  beast::get_lowest_layer(stream).socket().cancel(ec);
}

// The body of a Body::streamed request, read through a buffer_body parser as the route pulls
// it. Each read has the read timeout (a long upload is fine, a stalled one is not); 100 Continue
// goes out on the first read. detach() ends its use when the reply is done.
template <class Stream>
class StreamedBody : public BodyReader {
 public:
  StreamedBody(Stream& stream, beast::flat_buffer& buf, bhttp::request_parser<bhttp::buffer_body>& parser,
               const ServerLimits& limits, bool expect_continue)
      : stream_(&stream), buf_(&buf), parser_(&parser), limits_(limits), expect_continue_(expect_continue) {}

  awaitable<Result<size_t>> read(char* out, size_t n) override {
    if (!stream_) co_return Error(Code::internal, "request body read after its reply");
    if (parser_->is_done() || n == 0) co_return size_t(0);
    boost::system::error_code ec;
    auto tok = asio::redirect_error(use_awaitable, ec);
    if (expect_continue_) {
      expect_continue_ = false;
      if (!co_await write_all(*stream_, limits_.write_timeout, kContinue))
        co_return Error(Code::io, "request body: writing 100 Continue failed (the client went away or stalled)");
    }
    auto& body = parser_->get().body();
    body.data = out;
    body.size = n;
    while (body.size == n && !parser_->is_done()) {
      stream_->expires_after(limits_.read_timeout);
      co_await bhttp::async_read(*stream_, *buf_, *parser_, tok);
      if (ec == bhttp::error::need_buffer) ec = {};
      if (ec) co_return Error(Code::io, "reading the request body: " + ec.message());
    }
    co_return n - body.size;
  }

  std::optional<uint64_t> content_length() const override {
    if (!parser_) return std::nullopt;
    auto len = parser_->content_length();
    return len ? std::optional<uint64_t>(*len) : std::nullopt;
  }

  bool done() const { return parser_->is_done(); }
  void detach() {
    stream_ = nullptr;
    parser_ = nullptr;
  }

 private:
  Stream* stream_;
  beast::flat_buffer* buf_;
  bhttp::request_parser<bhttp::buffer_body>* parser_;
  const ServerLimits& limits_;
  bool expect_continue_;
};

}  // namespace

template <class Stream>
awaitable<bool> Server::Impl::send_reply(Stream& stream, ConnState& st, const Request& req, Reply reply,
                                         bool keep_alive, int* status_out) {
  const bool head = req.method == "HEAD";

  auto write_plain = [&](Response r) -> awaitable<bool> {
    *status_out = r.status;
    ResponseHead h(r.status, r.content_type, r.headers, keep_alive);
    const bool bodiless = bodiless_status(r.status);
    if (head || !bodiless) h.set("Content-Length", std::to_string(r.body.size()));  // HEAD: the GET's length
    const std::string head_text = h.text();
    const std::string_view body = head || bodiless ? std::string_view() : std::string_view(r.body);
    const bool ok = co_await write_all(stream, limits.write_timeout, head_text, body);
    co_return ok && keep_alive;
  };

  if (auto* r = std::get_if<Response>(&reply)) co_return co_await write_plain(std::move(*r));

  auto& s = std::get<http::Stream>(reply);
  st.source = s.source;

  auto first = co_await s.source->next();
  if (!first.ok() || !first->has_value()) {
    st.source.reset();
    if (st.peer_gone) co_return false;
    if (!first.ok()) {
      Error e = first.error();
      if (st.stopping && e.code == Code::cancelled) e = Error(Code::busy, "server is shutting down");
      // Built before the co_await: with a conditional expression inside its operand, GCC 12 called
      // the empty error_reply of an NDJSON stream.
      Response r;
      if (s.error_reply) r = s.error_reply(e);
      else r = error_response(e);
      co_return co_await write_plain(std::move(r)) && !st.stopping;
    }
    Response empty;  // a stream with no chunks: an empty body
    empty.status = s.status;
    empty.content_type = s.content_type;
    empty.headers = s.headers;
    co_return co_await write_plain(std::move(empty)) && !st.stopping;
  }
  if (s.single) {
    st.source.reset();
    Response r;
    r.status = s.status;
    r.content_type = s.content_type;
    r.headers = s.headers;
    r.body = std::move(**first);
    co_return co_await write_plain(std::move(r)) && !st.stopping;
  }

  *status_out = s.status;
  ResponseHead h(s.status, s.content_type, s.headers, keep_alive);
  h.set("Cache-Control", "no-cache");
  h.set("Transfer-Encoding", "chunked");
  const std::string head_text = h.text();
  if (!co_await write_all(stream, limits.write_timeout, head_text)) {
    st.peer_gone = true;  // a failed write is the client going away, as much as an EOF is
    s.source->cancel();
    st.source.reset();
    co_return false;
  }
  std::string chunk = std::move(**first);
  bool ok = true;
  while (true) {
    if (!co_await write_chunk(stream, limits.write_timeout, chunk)) {
      st.peer_gone = true;
      ok = false;
      break;
    }
    auto nx = co_await s.source->next();
    if (!nx.ok()) {
      if (st.peer_gone) {
        ok = false;
        break;
      }
      Error e = nx.error();
      if (st.stopping && e.code == Code::cancelled) e = Error(Code::cancelled, "server is shutting down");
      chunk = s.error_chunk ? s.error_chunk(e) : ndjson_error_line(e);
      if (!co_await write_chunk(stream, limits.write_timeout, chunk)) ok = false;
      break;
    }
    if (!nx->has_value()) break;
    chunk = std::move(**nx);
  }
  if (!ok) {
    s.source->cancel();
    st.source.reset();
    co_return false;
  }
  st.source.reset();
  const bool ended = co_await write_all(stream, limits.write_timeout, kLastChunk);
  co_return ended && keep_alive && !st.stopping;
}

template <class Stream>
awaitable<void> Server::Impl::session(Stream stream, Peer peer, Origin where) {
  auto self = shared_from_this();
  auto st = std::make_shared<ConnState>();
  auto& sock = beast::get_lowest_layer(stream).socket();
  st->fd = sock.native_handle();
  st->close = [&sock] {
    boost::system::error_code ec;
    sock.shutdown(asio::socket_base::shutdown_both, ec);
    sock.cancel(ec);
  };
  std::string refusal;
  uint64_t id = add_conn(stream.get_executor(), st, where.ip, where.origin, &refusal);
  boost::system::error_code ec;
  auto tok = asio::redirect_error(use_awaitable, ec);
  if (id == 0) {
    // Over a connection cap (or stopping): say so and close.
    log.debug("http: " + peer.address + ": refused: " + refusal);
    const std::string body = error_response(503, refusal).body;
    ResponseHead h(503, "application/json; charset=utf-8", {}, false);
    h.set("Content-Length", std::to_string(body.size()));
    const std::string head_text = h.text();
    co_await write_all(stream, std::chrono::seconds(5), head_text, body);
    st->alive = false;
    co_return;
  }

  beast::flat_buffer buf;
  bool first_request = true;
  uint64_t n_requests = 0;
  while (!st->stopping) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(static_cast<uint32_t>(limits.max_header_bytes));
    parser.body_limit(boost::none);  // set below, once the route says whether it streams the body
    // A connection that has not sent a whole request yet gets the short header timeout; one
    // waiting between requests is idle (the first to close when the server fills up).
    if (first_request) {
      stream.expires_after(limits.header_timeout.count() > 0
                               ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(limits.header_timeout)
                               : std::chrono::steady_clock::duration(limits.read_timeout));
    } else {
      stream.expires_after(limits.idle_timeout);
      set_conn_state(id, ConnectionTable::State::idle);
      st->idle_wait = true;
      if (st->evicted) break;
    }
    first_request = false;
    co_await bhttp::async_read_header(stream, buf, parser, tok);
    st->idle_wait = false;
    if (!ec) set_conn_state(id, ConnectionTable::State::busy);
    if (ec) {
      if (ec != bhttp::error::end_of_stream && ec != asio::error::operation_aborted &&
          ec != beast::error::timeout && ec != asio::error::connection_reset && ec != asio::error::eof)
        log.debug("http: " + peer.address + ": read: " + ec.message());
      int status = 0;
      Request dummy;
      if (ec == bhttp::error::header_limit)
        co_await send_reply(stream, *st, dummy, error_response(431, "request header too large"), false, &status);
      // Beast checks Content-Length against the body limit while parsing the header.
      if (ec == bhttp::error::body_limit)
        co_await send_reply(stream, *st, dummy,
                            error_response(413, "request body too large (limit " +
                                                    std::to_string(limits.max_body_bytes) + " bytes)"),
                            false, &status);
      break;
    }
    auto& hdr = parser.get();
    const bool streamed_body =
        router.streams_body(std::string(hdr.method_string()), std::string(hdr.target().substr(0, hdr.target().find('?'))));
    if (!streamed_body) parser.body_limit(limits.max_body_bytes);
    // Reject oversized bodies before reading them.
    if (!streamed_body && hdr.has_content_length() && parser.content_length() &&
        *parser.content_length() > limits.max_body_bytes) {
      int status = 0;
      Request r;
      co_await send_reply(stream, *st, r,
                          error_response(413, "request body too large (limit " +
                                                  std::to_string(limits.max_body_bytes) + " bytes)"),
                          false, &status);
      break;
    }
    std::optional<bhttp::request_parser<bhttp::buffer_body>> body_parser;
    std::shared_ptr<StreamedBody<Stream>> body_reader;
    if (streamed_body) {
      body_parser.emplace(std::move(parser));
      body_reader = std::make_shared<StreamedBody<Stream>>(
          stream, buf, *body_parser, limits, beast::iequals(body_parser->get()[bhttp::field::expect], "100-continue"));
    } else if (beast::iequals(hdr[bhttp::field::expect], "100-continue")) {
      if (!co_await write_all(stream, limits.write_timeout, kContinue)) break;
    }
    if (!streamed_body) {
      stream.expires_after(limits.read_timeout);
      co_await bhttp::async_read(stream, buf, parser, tok);
    }
    if (ec) {
      int status = 0;
      Request r;
      if (ec == bhttp::error::body_limit)
        co_await send_reply(stream, *st, r, error_response(413, "request body too large"), false, &status);
      else if (ec != bhttp::error::end_of_stream && ec != asio::error::operation_aborted &&
               ec != beast::error::timeout)
        co_await send_reply(stream, *st, r, error_response(400, "bad request: " + ec.message()), false, &status);
      break;
    }
    const auto t0 = std::chrono::steady_clock::now();

    Request req;
    const auto& head = streamed_body ? body_parser->get().base() : parser.get().base();
    req.method = std::string(head.method_string());
    req.target = std::string(head.target());
    auto q = req.target.find('?');
    req.path = req.target.substr(0, q);
    if (q != std::string::npos) req.query = req.target.substr(q + 1);
    for (const auto& f : head) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      req.headers[name] = std::string(f.value());
    }
    bool keep_alive = streamed_body ? body_parser->get().keep_alive() : parser.get().keep_alive();
    if (streamed_body) req.body_reader = body_reader;
    else req.body = std::move(parser.get().body());
    req.peer = peer;

    Policy pol = current_policy();
    Reply reply = handle_request(req, router, pol);

    int status = 0;
    const bool streaming = std::holds_alternative<http::Stream>(reply);
    if (body_reader && !streaming && !body_reader->done()) keep_alive = false;  // refused before the upload
    // An upload's own reads notice a peer that goes away; a watch would race them for the socket.
    const bool watch = streaming && !streamed_body;
    if (watch) start_watch(stream, st);
    bool keep = co_await send_reply(stream, *st, req, std::move(reply), keep_alive, &status);
    if (watch) stop_watch(stream, st);
    if (body_reader) {
      if (!body_reader->done()) keep = false;  // the body was not read to its end: close
      body_reader->detach();
    }

    const auto took = std::chrono::steady_clock::now() - t0;
    if (observe) observe(req, status, took);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
    const std::string request_id = request_id_of(req, id, ++n_requests);
    log.info("http: " + req.method + " " + req.path + " " + std::to_string(status) + " " + std::to_string(ms) +
                 "ms " + peer.address + (st->peer_gone ? " (client went away)" : ""),
             {.request_id = request_id, .client = peer.address});
    if (!keep || st->evicted) break;
  }
  st->alive = false;
  st->source.reset();
  remove_conn(id);
  beast::get_lowest_layer(stream).socket().shutdown(asio::socket_base::shutdown_send, ec);
  // Lingering close: discard what the peer still sends (an unread body after a 413) for a
  // moment, so the kernel does not reset the connection before the peer read our last reply.
  if (!st->peer_gone) {
    char junk[4096];
    size_t total = 0;
    stream.expires_after(std::chrono::seconds(1));
    while (total < (8u << 20)) {
      size_t n = co_await stream.async_read_some(asio::buffer(junk), tok);
      if (ec) break;
      total += n;
    }
  }
}

template <class Acceptor, class Make>
awaitable<void> Server::Impl::accept_loop(std::shared_ptr<Acceptor> acc, Make make_peer) {
  auto self = shared_from_this();
  while (true) {
    boost::system::error_code ec;
    auto sock = co_await acc->async_accept(asio::make_strand(io), asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acc->is_open()) break;
      log.warn(std::string("http: accept: ") + ec.message());
      if (ec == asio::error::no_descriptors) {
        asio::steady_timer t(io, std::chrono::milliseconds(100));
        co_await t.async_wait(asio::redirect_error(use_awaitable, ec));
      }
      continue;
    }
    Peer peer = make_peer(sock);
    Origin where = origin_of(sock);
    auto ex = sock.get_executor();
    // One stream type for TCP and Unix connections, so the session coroutine (most of this
    // file's compile time) is instantiated once.
    Connection stream(asio::generic::stream_protocol::socket(std::move(sock)));
    asio::co_spawn(ex, session(std::move(stream), std::move(peer), std::move(where)), [this](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        log.error(std::string("http: connection failed: ") + ex.what());
      }
    });
  }
}

Server::Server(asio::io_context& io, const Router& router, ServerLimits limits, Logger& log, RequestObserver observe)
    : impl_(std::make_shared<Impl>(io, router, limits, log, std::move(observe))) {}

Server::~Server() { impl_->stop(); }

void Server::set_policy(Policy p) {
  std::lock_guard lk(impl_->mu);
  impl_->policy = std::move(p);
}

int Server::tcp_port() const {
  std::lock_guard lk(impl_->mu);
  return impl_->port;
}

void Server::stop() { impl_->stop(); }

Result<void> Server::listen_tcp(const HostPort& where) {
  boost::system::error_code ec;
  tcp::resolver resolver(impl_->io);
  auto results = resolver.resolve(where.host, std::to_string(where.port),
                                  tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) return Error(Code::invalid_argument, "cannot resolve listen host \"" + where.host + "\": " + ec.message());
  std::string last_err;
  int bound = 0;
  for (const auto& entry : results) {
    auto ep = entry.endpoint();
    if (bound > 0 && impl_->port != 0) ep.port(static_cast<unsigned short>(impl_->port));
    auto acc = std::make_shared<tcp::acceptor>(impl_->io);
    acc->open(ep.protocol(), ec);
    if (!ec) acc->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec && ep.address().is_v6()) acc->set_option(asio::ip::v6_only(true), ec);
    if (!ec) acc->bind(ep, ec);
    if (!ec) acc->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      last_err = endpoint_text(ep) + ": " + ec.message();
      continue;
    }
    impl_->serve_tcp(acc);
    ++bound;
  }
  if (bound == 0)
    return Error(Code::io, "cannot listen on " + where.host + ":" + std::to_string(where.port) + ": " + last_err +
                               " (is another server running? set NURLLAMA_HOST to use another address)");
  return ok();
}

Result<void> Server::listen_unix(const std::string& path, PeerAuth auth) {
  namespace fs = std::filesystem;
  std::error_code fec;
  fs::path p(path);
  if (p.has_parent_path() && !fs::exists(p.parent_path(), fec)) {
    fs::create_directories(p.parent_path(), fec);
    if (fec) return Error(Code::io, "cannot create " + p.parent_path().string() + ": " + fec.message());
    ::chmod(p.parent_path().c_str(), 0755);
  }
  boost::system::error_code ec;
  if (fs::exists(p, fec)) {
    // Refuse to steal a live socket; replace a stale one.
    local::socket probe(impl_->io);
    probe.connect(local::endpoint(path), ec);
    if (!ec) return Error(Code::io, "another daemon is listening on " + path);
    fs::remove(p, fec);
  }
  auto acc = std::make_shared<local::acceptor>(impl_->io);
  acc->open(local(), ec);
  if (!ec) acc->bind(local::endpoint(path), ec);
  if (!ec) acc->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Error(Code::io, "cannot listen on unix socket " + path + ": " + ec.message());
  ::chmod(path.c_str(), 0660);
  impl_->serve_unix(acc, std::move(auth), path);
  return ok();
}

void Server::Impl::serve_tcp(std::shared_ptr<tcp::acceptor> acc) {
  boost::system::error_code ec;
  const std::string where = endpoint_text(acc->local_endpoint(ec));
  {
    std::lock_guard lk(mu);
    tcp_acceptors.push_back(acc);
    if (!ec) port = acc->local_endpoint(ec).port();
    listen_desc.push_back(where);
  }
  log.info("http: listening on " + where);
  asio::co_spawn(io,
                 accept_loop(acc, [](auto& s) {
                   Peer p;
                   boost::system::error_code e;
                   auto ep = s.remote_endpoint(e);
                   p.address = e ? "?" : endpoint_text(ep);
                   return p;
                 }),
                 asio::detached);
}

void Server::Impl::serve_unix(std::shared_ptr<local::acceptor> acc, PeerAuth auth, const std::string& owned_path) {
  boost::system::error_code ec;
  const std::string path = acc->local_endpoint(ec).path();
  {
    std::lock_guard lk(mu);
    unix_acceptors.push_back(acc);
    if (!owned_path.empty()) unix_path = owned_path;
    listen_desc.push_back("unix:" + path);
  }
  log.info("http: listening on unix:" + path);
  asio::co_spawn(io,
                 accept_loop(acc,
                             [auth](auto& s) {
                               Peer p;
                               p.unix_socket = true;
                               ucred cred{};
                               socklen_t len = sizeof cred;
                               if (::getsockopt(s.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
                                 p.uid = static_cast<int>(cred.uid);
                                 p.gid = static_cast<int>(cred.gid);
                                 p.pid = static_cast<int>(cred.pid);
                                 p.trusted = auth && auth(p.uid, p.gid);
                               }
                               p.address = "unix:uid=" + std::to_string(p.uid) + ",pid=" + std::to_string(p.pid);
                               return p;
                             }),
                 asio::detached);
}

Result<void> Server::adopt_tcp(int fd) {
  boost::system::error_code ec;
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0 ||
      (sa.ss_family != AF_INET && sa.ss_family != AF_INET6))
    return Error(Code::invalid_argument, "inherited socket " + std::to_string(fd) + " is not a TCP socket");
  auto acc = std::make_shared<tcp::acceptor>(impl_->io);
  acc->assign(sa.ss_family == AF_INET ? tcp::v4() : tcp::v6(), fd, ec);
  if (ec) return Error(Code::io, "cannot use inherited socket " + std::to_string(fd) + ": " + ec.message());
  impl_->serve_tcp(acc);
  return ok();
}

Result<void> Server::adopt_unix(int fd, PeerAuth auth) {
  boost::system::error_code ec;
  auto acc = std::make_shared<local::acceptor>(impl_->io);
  acc->assign(local(), fd, ec);
  if (ec) return Error(Code::io, "cannot use inherited socket " + std::to_string(fd) + ": " + ec.message());
  impl_->serve_unix(acc, std::move(auth), "");
  return ok();
}

std::vector<std::string> Server::listening() const {
  std::lock_guard lk(impl_->mu);
  return impl_->listen_desc;
}

}  // namespace nurl::http
