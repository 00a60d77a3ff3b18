// Socket-free HTTP pieces: router matching and errors, listen-address parsing, the Host-header
// check, CORS allow-list and preflight.
#include <gtest/gtest.h>

#include "http/pipeline.h"
#include "http/router.h"
#include "http/security.h"

namespace nurl::http {
namespace {

Response as_response(const Reply& r) { return std::get<Response>(r); }

Router test_router() {
  Router r;
  r.add("GET", "/api/tags", [](const Request&) { return Reply(json_response(200, "{\"models\":[]}")); });
  r.add("POST", "/api/blobs/:digest", [](const Request& q) { return Reply(json_response(201, q.params.at("digest"))); });
  r.add("GET", "/files/*rest", [](const Request& q) { return Reply(json_response(200, q.params.at("rest"))); });
  r.add("POST", "/control/shutdown", [](const Request&) { return Reply(json_response(200, "{}")); }, Access::control);
  r.add("GET", "/boom", [](const Request&) -> Reply { throw std::runtime_error("kaboom"); });
  return r;
}

Request make(const std::string& method, const std::string& path) {
  Request q;
  q.method = method;
  q.path = path;
  q.target = path;
  return q;
}

TEST(Router, MatchesParamsAndRest) {
  auto r = test_router();
  auto q = make("POST", "/api/blobs/sha256-abc");
  auto res = as_response(r.dispatch(q));
  EXPECT_EQ(res.status, 201);
  EXPECT_EQ(res.body, "sha256-abc");
  q = make("GET", "/files/a/b/c.js");
  EXPECT_EQ(as_response(r.dispatch(q)).body, "a/b/c.js");
}

TEST(Router, UnknownPathIs404WrongMethodIs405HeadUsesGet) {
  auto r = test_router();
  auto q = make("GET", "/api/nope");
  EXPECT_EQ(as_response(r.dispatch(q)).status, 404);
  q = make("DELETE", "/api/tags");
  EXPECT_EQ(as_response(r.dispatch(q)).status, 405);
  q = make("HEAD", "/api/tags");
  EXPECT_EQ(as_response(r.dispatch(q)).status, 200);
  q = make("POST", "/api/blobs/");
  EXPECT_EQ(as_response(r.dispatch(q)).status, 404);
}

TEST(Router, ControlRoutesNeedATrustedUnixPeer) {
  auto r = test_router();
  auto q = make("POST", "/control/shutdown");
  EXPECT_EQ(as_response(r.dispatch(q)).status, 403);
  q.peer.unix_socket = true;
  q.peer.trusted = true;
  EXPECT_EQ(as_response(r.dispatch(q)).status, 200);
}

TEST(Router, HandlerExceptionIs500WithMessage) {
  auto r = test_router();
  auto q = make("GET", "/boom");
  auto res = as_response(r.dispatch(q));
  EXPECT_EQ(res.status, 500);
  EXPECT_NE(res.body.find("kaboom"), std::string::npos);
}

TEST(HostPort, ParsesOllamaHostForms) {
  struct Case {
    const char* in;
    const char* host;
    int port;
  };
  for (const auto& c : std::vector<Case>{{"127.0.0.1:11434", "127.0.0.1", 11434},
                                         {"0.0.0.0", "0.0.0.0", 11434},
                                         {"http://localhost:8080", "localhost", 8080},
                                         {"https://example.com", "example.com", 443},
                                         {":9000", "127.0.0.1", 9000},
                                         {"[::1]:1234", "::1", 1234},
                                         {"http://[::]:5000/", "::", 5000}}) {
    HostPort hp;
    std::string err;
    ASSERT_TRUE(parse_host_port(c.in, &hp, &err)) << c.in << ": " << err;
    EXPECT_EQ(hp.host, c.host) << c.in;
    EXPECT_EQ(hp.port, c.port) << c.in;
  }
  HostPort hp;
  std::string err;
  EXPECT_FALSE(parse_host_port("ftp://x", &hp, &err));
  EXPECT_FALSE(parse_host_port("localhost:99999", &hp, &err));
  EXPECT_FALSE(parse_host_port("localhost:abc", &hp, &err));
}

TEST(Security, HostHeaderCheck) {
  for (const char* ok : {"", "localhost", "localhost:11434", "127.0.0.1:11434", "127.1.2.3", "[::1]:11434",
                         "app.localhost", "mybox", "MYBOX:80", "printer.local", "x.internal"})
    EXPECT_TRUE(host_header_allowed(ok, "mybox")) << ok;
  for (const char* bad : {"evil.com", "evil.com:11434", "10.0.0.1", "localhost.evil.com", "[::2]"})
    EXPECT_FALSE(host_header_allowed(bad, "mybox")) << bad;
}

TEST(Security, CorsAllowList) {
  auto origins = cors_allowed_origins({"https://chat.example.org", "chrome-extension://*"});
  for (const char* ok : {"http://localhost", "http://localhost:3000", "https://127.0.0.1:8443", "app://x",
                         "https://chat.example.org", "chrome-extension://abcdef"})
    EXPECT_TRUE(origin_allowed(ok, origins)) << ok;
  for (const char* bad : {"https://evil.com", "http://localhost.evil.com", "https://chat.example.org.evil"})
    EXPECT_FALSE(origin_allowed(bad, origins)) << bad;
}

TEST(Pipeline, RejectsForeignHostOnLoopbackAndHandlesCors) {
  auto r = test_router();
  Policy p;
  p.check_host = true;
  p.origins = cors_allowed_origins({});
  auto q = make("GET", "/api/tags");
  q.headers["host"] = "attacker.example:11434";
  EXPECT_EQ(as_response(handle_request(q, r, p)).status, 403);

  q = make("GET", "/api/tags");
  q.headers["host"] = "localhost:11434";
  q.headers["origin"] = "http://localhost:5173";
  auto ok = as_response(handle_request(q, r, p));
  EXPECT_EQ(ok.status, 200);
  bool has_acao = false;
  for (auto& [k, v] : ok.headers) has_acao |= k == "Access-Control-Allow-Origin" && v == "http://localhost:5173";
  EXPECT_TRUE(has_acao);

  q.headers["origin"] = "https://evil.com";
  EXPECT_EQ(as_response(handle_request(q, r, p)).status, 403);

  auto pre = make("OPTIONS", "/api/chat");
  pre.headers["origin"] = "http://localhost:5173";
  EXPECT_EQ(as_response(handle_request(pre, r, p)).status, 204);
}

TEST(Pipeline, UntrustedUnixPeerIsRefused) {
  auto r = test_router();
  Policy p;
  auto q = make("GET", "/api/tags");
  q.peer.unix_socket = true;
  q.peer.trusted = false;
  EXPECT_EQ(as_response(handle_request(q, r, p)).status, 403);
}

}  // namespace
}  // namespace nurl::http
