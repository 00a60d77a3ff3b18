#include "routes/web-session.h"

#include <algorithm>
#include <cctype>

#include "core/json-text.h"
#include "history/history.h"
#include "store/sha256.h"

namespace nurl {

namespace {

bool is_client_id(const std::string& s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The value of cookie `name` in a Cookie header ("a=1; b=2"), or "".
std::string cookie_value(const std::string& header, const std::string& name) {
  size_t i = 0;
  while (i < header.size()) {
    size_t end = header.find(';', i);
    if (end == std::string::npos) end = header.size();
    std::string part = header.substr(i, end - i);
    size_t a = part.find_first_not_of(' ');
    if (a != std::string::npos) part = part.substr(a);
    auto eq = part.find('=');
    if (eq != std::string::npos && part.substr(0, eq) == name) {
      std::string v = part.substr(eq + 1);
      while (!v.empty() && v.back() == ' ') v.pop_back();
      return v;
    }
    i = end + 1;
  }
  return "";
}

std::string peer_ip(const std::string& address) {
  if (!address.empty() && address[0] == '[') return address.substr(1, address.find(']') - 1);
  auto colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string user_key(const std::string& id) {
  Sha256 h;
  h.update("nl_client:" + id);
  std::string d = h.finish();
  return "web:" + d.substr(d.find(':') + 1, 16);
}

}  // namespace

Result<WebClient> web_client(const http::Request& req) {
  WebClient c;
  c.id = cookie_value(req.header("cookie"), "nl_client");
  if (!is_client_id(c.id)) {
    NURL_ASSIGN(c.id, history::random_id());
    c.fresh = true;
  }
  c.user = user_key(c.id);
  return c;
}

bool request_is_secure(const http::Request& req, const Config& cfg) {
  if (req.peer.unix_socket) return false;
  const std::string ip = peer_ip(req.peer.address);
  if (std::find(cfg.trusted_proxies.begin(), cfg.trusted_proxies.end(), ip) == cfg.trusted_proxies.end()) return false;
  if (lower(req.header("x-forwarded-proto")) == "https") return true;
  return lower(req.header("forwarded")).find("proto=https") != std::string::npos;
}

std::string client_cookie(const WebClient& c, bool secure) {
  return "nl_client=" + c.id + "; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "");
}

void attach_cookie(http::Reply& reply, const WebClient& c, bool secure) {
  if (!c.fresh) return;
  std::visit([&](auto& r) { r.headers.push_back({"Set-Cookie", client_cookie(c, secure)}); }, reply);
}

std::string web_dump(const WebJson& j) { return dump_json(j, -1, InvalidUtf8::replace); }

http::Response web_json(int status, const WebJson& j) { return http::json_response(status, web_dump(j)); }

}  // namespace nurl
