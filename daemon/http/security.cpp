#include "http/security.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace nurl::http {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Splits "host:port" / "[v6]:port" / "host" into host and optional port text.
void split_host(std::string_view s, std::string_view* host, std::string_view* port) {
  *port = {};
  if (!s.empty() && s[0] == '[') {
    auto close = s.find(']');
    if (close == std::string_view::npos) { *host = s; return; }
    *host = s.substr(1, close - 1);
    if (close + 1 < s.size() && s[close + 1] == ':') *port = s.substr(close + 2);
    return;
  }
  auto colon = s.rfind(':');
  // More than one colon without brackets: a bare IPv6 address.
  if (colon != std::string_view::npos && s.find(':') == colon) {
    *host = s.substr(0, colon);
    *port = s.substr(colon + 1);
  } else {
    *host = s;
  }
}

}  // namespace

bool parse_host_port(std::string_view s, HostPort* out, std::string* err) {
  HostPort hp;
  std::string_view rest = s;
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) rest.remove_suffix(1);
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    hp.port = 443;
  } else if (rest.find("://") != std::string_view::npos) {
    *err = "unsupported scheme in \"" + std::string(s) + "\" (use http://)";
    return false;
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  std::string_view host, port;
  split_host(rest, &host, &port);
  if (!host.empty()) hp.host = std::string(host);
  if (!port.empty()) {
    int p = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || ptr != port.data() + port.size() || p < 0 || p > 65535) {
      *err = "invalid port in \"" + std::string(s) + "\"";
      return false;
    }
    hp.port = p;
  }
  *out = hp;
  return true;
}

bool is_loopback_host(std::string_view host) {
  std::string h = lower(host);
  if (h == "localhost" || ends_with(h, ".localhost")) return true;
  in_addr a4{};
  if (inet_pton(AF_INET, h.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (inet_pton(AF_INET6, h.c_str(), &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  return false;
}

bool host_header_allowed(std::string_view host_header, std::string_view machine_hostname) {
  if (host_header.empty()) return true;
  std::string_view host, port;
  split_host(host_header, &host, &port);
  std::string h = lower(host);
  if (is_loopback_host(h)) return true;
  if (!machine_hostname.empty() && h == lower(machine_hostname)) return true;
  return ends_with(h, ".local") || ends_with(h, ".internal");
}

std::vector<std::string> cors_allowed_origins(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  for (const char* host : {"localhost", "127.0.0.1", "0.0.0.0", "[::1]"}) {
    for (const char* scheme : {"http", "https"}) {
      out.push_back(std::string(scheme) + "://" + host);
      out.push_back(std::string(scheme) + "://" + host + ":*");
    }
  }
  for (const char* s : {"app://*", "file://*", "tauri://*", "vscode-webview://*"}) out.push_back(s);
  for (const auto& e : extra)
    if (!e.empty()) out.push_back(e);
  return out;
}

bool glob_match(std::string_view p, std::string_view s) {
  // Iterative wildcard match with backtracking to the last '*'.
  size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (pi < p.size() && p[pi] == s[si]) {
      ++pi;
      ++si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool origin_allowed(std::string_view origin, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns)
    if (p == "*" || glob_match(p, origin)) return true;
  return false;
}

bool same_origin(std::string_view origin, std::string_view host_header) {
  if (host_header.empty()) return false;
  std::string o = lower(origin);
  std::string_view rest = o;
  std::string default_port;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
    default_port = "80";
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    default_port = "443";
  } else {
    return false;
  }
  if (rest.empty() || rest.find_first_of("/?#@ ") != std::string_view::npos) return false;
  std::string_view oh, op, hh, hp;
  split_host(rest, &oh, &op);
  std::string h = lower(host_header);
  split_host(h, &hh, &hp);
  if (oh.empty() || oh != hh) return false;
  return (op.empty() ? std::string_view(default_port) : op) == (hp.empty() ? std::string_view(default_port) : hp);
}

}  // namespace nurl::http
