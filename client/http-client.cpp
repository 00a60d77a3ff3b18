#include "client/http-client.h"

#include <curl/curl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api/service-paths.h"
#include "core/json-text.h"

namespace nurl::client {

namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// "host:port", "http://host:port", ":port", "host" → "http://host:port".
std::string normalise_host(std::string h) {
  std::string scheme = "http";
  if (auto p = h.find("://"); p != std::string::npos) {
    scheme = h.substr(0, p);
    h = h.substr(p + 3);
  }
  while (!h.empty() && h.back() == '/') h.pop_back();
  std::string host = h, port = "11434";
  if (!h.empty() && h.front() == '[') {  // [::1]:port
    auto close = h.find(']');
    host = h.substr(0, close + 1);
    if (close != std::string::npos && close + 1 < h.size() && h[close + 1] == ':') port = h.substr(close + 2);
  } else if (auto c = h.rfind(':'); c != std::string::npos) {
    host = h.substr(0, c);
    port = h.substr(c + 1);
  }
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  return scheme + "://" + host + ":" + port;
}

struct StreamState {
  std::string buf;
  const std::function<bool(const nlohmann::json&)>* on_line = nullptr;
  bool hung_up = false;
  bool bad_json = false;
  long status = 0;
  CURL* curl = nullptr;
  std::string error_body;  // body of a non-2xx answer
};

size_t collect(char* ptr, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(ptr, size * n);
  return size * n;
}

size_t stream_write(char* ptr, size_t size, size_t n, void* user) {
  auto* st = static_cast<StreamState*>(user);
  if (st->status == 0) curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &st->status);
  if (st->status >= 300) {
    st->error_body.append(ptr, size * n);
    return size * n;
  }
  st->buf.append(ptr, size * n);
  size_t start = 0;
  for (size_t nl; (nl = st->buf.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(st->buf.data() + start, nl - start);
    if (line.empty() || line == "\r") continue;
    if (line.rfind("data: ", 0) == 0) line.remove_prefix(6);  // tolerate SSE framing
    auto j = parse_json(line);
    if (j.is_discarded()) {
      st->bad_json = true;
      return 0;
    }
    if (!(*st->on_line)(j)) {
      st->hung_up = true;
      return 0;  // aborts the transfer: the daemon sees the disconnect
    }
  }
  st->buf.erase(0, start);
  return size * n;
}

}  // namespace

std::string Endpoint::describe() const { return unix_socket.empty() ? base_url : unix_socket; }

Endpoint resolve_endpoint() {
  Endpoint ep;
  std::string host = env("NURLLAMA_HOST");
  if (host.empty()) host = env("OLLAMA_HOST");
  if (!host.empty()) {
    ep.base_url = normalise_host(host);
    return ep;
  }
  ep.base_url = "http://localhost";
  std::string sock = env("NURLLAMA_SOCKET");
  if (sock.empty()) {
    // The user's own daemon first, then the system service's socket (also when it is there but
    // not ours to open, so that the error can say how to get access).
    const std::string user_sock = user_socket_path(process_env(), ::getuid());
    struct stat st {};
    if (exists(user_sock)) sock = user_sock;
    else if (::stat(kSystemSocket, &st) == 0 || errno == EACCES) sock = kSystemSocket;
    else sock = user_sock;
  }
  ep.unix_socket = sock;
  return ep;
}

std::string unreachable_hint(const Endpoint& ep) {
  if (ep.unix_socket.empty())
    return "Is nurllamad running and listening on " + ep.base_url +
           "? (NURLLAMA_HOST or OLLAMA_HOST chose this address; unset it to use the local socket)";
  const std::string& path = ep.unix_socket;
  int err = 0;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (fd >= 0 && path.size() < sizeof sa.sun_path) {
    std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) err = errno;
  }
  if (fd >= 0) ::close(fd);
  if (err == EACCES || err == EPERM)
    return "Permission denied on " + path + ": the nurllama system service admits members of the nurllama group. "
           "Add yourself with `sudo usermod -aG nurllama $USER`, then log in again (or run `newgrp nurllama`).";
  bool unit = false;
  for (const char* dir : {"/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system",
                          "/usr/local/lib/systemd/system"})
    unit = unit || exists(std::string(dir) + "/" + kServiceUnit);
  std::string start = unit ? "`sudo systemctl start nurllamad` (the system service), or `nurllama serve` (as you)"
                           : "`nurllama serve` (as you, in another terminal), or `sudo systemctl start nurllamad` "
                             "once the nurllama package is installed";
  if (err == ECONNREFUSED)
    return "Nothing listens on " + path + " (a daemon stopped without removing it). Start nurllamad: " + start + ".";
  return "nurllamad is not running (there is no " + path + "). Start it: " + start + ".";
}

nlohmann::json Response::json() const {
  auto j = parse_json(body);
  return j.is_discarded() ? nlohmann::json() : j;
}

std::string error_text(const Response& r) {
  auto j = r.json();
  if (j.is_object() && j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
  return "HTTP " + std::to_string(r.status) + (r.body.empty() ? "" : ": " + r.body.substr(0, 200));
}

HttpClient::HttpClient(Endpoint ep) : ep_(std::move(ep)) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() {
  if (curl_) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

namespace {

Error connect_error(const Endpoint& ep, CURLcode rc) {
  std::string msg = "could not reach nurllamad at " + ep.describe() + " (" + curl_easy_strerror(rc) + ")";
  if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) msg += "\n" + unreachable_hint(ep);
  return Error(Code::io, msg);
}

void setup(CURL* c, const Endpoint& ep, const std::string& method, const std::string& url) {
  curl_easy_reset(c);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  if (!ep.unix_socket.empty()) curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, ep.unix_socket.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");  // the daemon is local; never go through a proxy
  if (method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  else if (method != "GET" && method != "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  // A daemon with access "tokens" needs one over TCP (the Unix socket needs none).
  if (std::string tok = env("NURLLAMA_TOKEN"); !tok.empty() && ep.unix_socket.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, tok.c_str());
  }
}

}  // namespace

Result<Response> HttpClient::request(const std::string& method, const std::string& path,
                                     const std::optional<nlohmann::json>& body) {
  auto* c = static_cast<CURL*>(curl_);
  setup(c, ep_, method, ep_.base_url + path);
  std::string payload;
  curl_slist* headers = nullptr;
  if (body) {
    payload = dump_json(*body);
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, long(payload.size()));
    if (method != "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  Response r;
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) return connect_error(ep_, rc);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

Result<void> HttpClient::stream(const std::string& method, const std::string& path, const nlohmann::json& body,
                                const std::function<bool(const nlohmann::json&)>& on_line) {
  auto* c = static_cast<CURL*>(curl_);
  setup(c, ep_, method, ep_.base_url + path);
  const std::string payload = dump_json(body);
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (!body.is_null()) {  // null: a request without a body (GET)
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, long(payload.size()));
    if (method != "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  StreamState st;
  st.on_line = &on_line;
  st.curl = c;
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, stream_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &st);
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);
  if (st.hung_up) return Error(Code::cancelled, "stopped");
  if (st.bad_json) return Error(Code::corrupt, "the daemon sent a line that is not JSON");
  if (rc != CURLE_OK) {
    if (st.status != 0) return Error(Code::io, std::string("stream interrupted: ") + curl_easy_strerror(rc));
    return connect_error(ep_, rc);
  }
  if (st.status == 0) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st.status);
  if (st.status >= 300) {
    Response r{st.status, st.error_body};
    Code code = st.status == 404 ? Code::not_found : st.status == 503 ? Code::busy : Code::invalid_argument;
    if (st.status >= 500 && st.status != 503) code = Code::internal;
    return Error(code, error_text(r));
  }
  // A final line without a newline.
  if (!st.buf.empty()) {
    auto j = parse_json(st.buf);
    if (!j.is_discarded()) on_line(j);
  }
  return {};
}

Result<Response> HttpClient::upload(const std::string& path, const std::string& file) {
  FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) return Error(Code::not_found, file + ": cannot open");
  struct stat st {};
  ::fstat(fileno(f), &st);
  auto* c = static_cast<CURL*>(curl_);
  setup(c, ep_, "POST", ep_.base_url + path);
  curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "POST");
  curl_easy_setopt(c, CURLOPT_READDATA, f);
  curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, curl_off_t(st.st_size));
  Response r;
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  CURLcode rc = curl_easy_perform(c);
  std::fclose(f);
  if (rc != CURLE_OK) return connect_error(ep_, rc);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

}  // namespace nurl::client
