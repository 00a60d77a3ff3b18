// Request-level security checks, socket-free: the Host-header check that defends a loopback
// listener against DNS rebinding, and the CORS origin allow-list (localhost origins plus
// configured patterns with '*' wildcards, as ollama does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nurl::http {

// A parsed listen address ("127.0.0.1:11434", "http://0.0.0.0", ":8080", "[::1]:1234").
struct HostPort {
  std::string host = "127.0.0.1";
  int port = 11434;
};
// Scheme optional (http:// or https://); missing host → 127.0.0.1; missing port → 11434
// (443 for https). Returns false with `err` set on garbage.
bool parse_host_port(std::string_view s, HostPort* out, std::string* err);

bool is_loopback_host(std::string_view host);

// When the server listens on loopback only, a request's Host header must name this machine
// (localhost, *.localhost, loopback IPs, the machine's hostname, *.local, *.internal) or be absent.
bool host_header_allowed(std::string_view host_header, std::string_view machine_hostname);

// The default allow-list plus `extra` patterns (from NURLLAMA_ORIGINS, comma separated).
std::vector<std::string> cors_allowed_origins(const std::vector<std::string>& extra);
// '*' matches any run of characters.
bool glob_match(std::string_view pattern, std::string_view s);
bool origin_allowed(std::string_view origin, const std::vector<std::string>& patterns);
// The Origin names the host the request was sent to (the Host header): the daemon's own page.
// Ports are compared with the scheme's default filled in; "null" and garbage never match.
bool same_origin(std::string_view origin, std::string_view host_header);

}  // namespace nurl::http
