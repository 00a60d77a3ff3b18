// web_request_fuzz: one request per input (fields separated by '\n': method, path, Host, Origin,
// Authorization, Content-Type, flags), through handle_request with tokens on and off, then a
// run of connection-table events from the same bytes. Checks the access rules' invariants: no
// protected route answers 2xx without a valid token when tokens are required; no web mutation
// passes without JSON + our Origin or a token; the table never exceeds its caps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "http/conn-table.h"
#include "http/pipeline.h"
#include "http/security.h"

using namespace nurl::http;

namespace {

std::vector<std::string> fields(const uint8_t* data, size_t size) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n' && out.size() < 8) out.emplace_back();
    else out.back() += static_cast<char>(data[i]);
  }
  out.resize(8);
  return out;
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = fields(data, size);
  Router r;
  for (const char* m : {"GET", "POST", "PATCH", "DELETE"}) {
    r.add(m, "/web/conversations/:id", [](const Request&) { return Reply(json_response(200, "{}")); });
    r.add(m, "/api/*rest", [](const Request&) { return Reply(json_response(200, "{}")); });
    r.add(m, "/v1/*rest", [](const Request&) { return Reply(json_response(200, "{}")); });
    r.add(m, "/web/chat", [](const Request&) { return Reply(json_response(200, "{}")); });
  }
  r.add("GET", "/", [](const Request&) { return Reply(json_response(200, "{}")); });

  for (bool tokens : {false, true}) {
    Policy p;
    p.origins = cors_allowed_origins({"https://*.example"});
    p.check_host = f[7].size() > 0 && (f[7][0] & 1);
    p.require_tokens = tokens;
    p.verify_token = [](std::string_view t) -> std::optional<TokenIdentity> {
      if (t == "good-chat") return TokenIdentity{"c", false};
      if (t == "good-admin") return TokenIdentity{"a", true};
      return std::nullopt;
    };
    Request q;
    q.method = f[0];
    q.path = q.target = f[1];
    q.headers["host"] = f[2];
    q.headers["origin"] = f[3];
    q.headers["authorization"] = f[4];
    q.headers["content-type"] = f[5];
    q.peer.unix_socket = f[6] == "unix";
    q.peer.trusted = true;
    Reply reply = handle_request(q, r, p);
    auto* res = std::get_if<Response>(&reply);
    if (!res || res->status >= 300) continue;
    const bool token = !q.token_name.empty();
    const bool tcp = !q.peer.unix_socket;
    const bool guarded = starts(q.path, "/api/") || starts(q.path, "/v1/") || starts(q.path, "/web/");
    if (tokens && tcp && guarded && q.method != "OPTIONS") check(token);
    if (tokens && tcp && guarded && token && !q.token_admin && q.method != "OPTIONS")
      check(chat_scope_allows(q.method, q.path));
    const bool mutation = q.method != "GET" && q.method != "HEAD" && q.method != "OPTIONS";
    if (tcp && mutation && starts(q.path, "/web/") && !token)
      check(same_origin(f[3], f[2]) && f[5].find("json") != std::string::npos);
  }

  ConnectionTable t({.total = 6, .per_peer = 3, .reserve = 2, .unix_total = 2});
  std::vector<uint64_t> ids;
  for (size_t i = 0; i + 1 < size && i < 512; i += 2) {
    const uint8_t op = data[i] % 4, arg = data[i + 1];
    if (op == 0) {
      auto origin = static_cast<ConnectionTable::Origin>(arg % 3);
      auto a = t.admit(origin == ConnectionTable::Origin::unix_socket ? "" : "10.0.0." + std::to_string(arg % 4), origin);
      if (a.id) ids.push_back(a.id);
    } else if (!ids.empty()) {
      uint64_t id = ids[arg % ids.size()];
      if (op == 1) t.set_state(id, ConnectionTable::State::idle);
      else if (op == 2) t.set_state(id, ConnectionTable::State::busy);
      else t.remove(id);
    }
    check(t.tcp_count() <= 6);
    check(t.remote_count() <= 4);
    for (int k = 0; k < 4; ++k) check(t.count_from("10.0.0." + std::to_string(k)) <= 3);
  }
  return 0;
}
