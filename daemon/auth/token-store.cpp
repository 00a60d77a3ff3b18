#include "auth/token-store.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>

#include "api/ollama.h"
#include "core/json-text.h"
#include "store/fs-util.h"
#include "store/sha256.h"

namespace nurl::auth {

namespace {

using Json = nlohmann::json;

struct FileEntry {
  TokenInfo info;
  std::string hash;
};

std::string base64url(const unsigned char* p, size_t n) {
  static const char* A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; ++i) {
    acc = (acc << 8) | p[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += A[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += A[(acc << (6 - bits)) & 63];
  return out;
}

bool is_hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

Result<std::vector<FileEntry>> parse_file(const std::string& path, const std::string& text) {
  std::vector<FileEntry> out;
  Json j = parse_json(text);
  if (j.is_discarded() || !j.is_object() || !j.contains("tokens") || !j["tokens"].is_array())
    return Error(Code::corrupt, path + ": not a token file (expected {\"tokens\": [...]})");
  for (const auto& t : j["tokens"]) {
    FileEntry e;
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || !t.contains("sha256") ||
        !t["sha256"].is_string())
      return Error(Code::corrupt, path + ": a token entry needs a name and a sha256");
    e.info.name = t["name"].get<std::string>();
    e.hash = t["sha256"].get<std::string>();
    if (!is_hex64(e.hash)) return Error(Code::corrupt, path + ": token " + e.info.name + ": sha256 is not 64 hex digits");
    auto scope = parse_scope(t.value("scope", "chat"));
    if (!scope.ok()) return scope.error().context(path + ": token " + e.info.name);
    e.info.scope = *scope;
    e.info.created_at = t.value("created_at", "");
    out.push_back(std::move(e));
  }
  return out;
}

std::string render_file(const std::vector<FileEntry>& entries) {
  Json arr = Json::array();
  for (const auto& e : entries)
    arr.push_back({{"name", e.info.name}, {"scope", scope_name(e.info.scope)}, {"sha256", e.hash},
                   {"created_at", e.info.created_at}});
  return dump_json(Json{{"version", 1}, {"tokens", arr}}, 2) + "\n";
}

Result<std::vector<FileEntry>> read_entries(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::vector<FileEntry>{};
  NURL_ASSIGN(std::string text, read_small_file(path, 4 << 20));
  return parse_file(path, text);
}

// Runs `change` on the file's entries under an exclusive lock; writes them back when it
// returns true. The lock file sits beside the token file.
Result<std::vector<FileEntry>> update_file(const std::string& path,
                                           const std::function<Result<bool>(std::vector<FileEntry>&)>& change) {
  std::filesystem::path p(path);
  if (p.has_parent_path()) NURL_TRY(make_dirs(p.parent_path()));
  const std::string lock_path = path + ".lock";
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return errno_error(errno, "opening", lock_path);
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      int e = errno;
      ::close(fd);
      return errno_error(e, "locking", lock_path);
    }
  }
  Result<std::vector<FileEntry>> out = read_entries(path);
  if (out.ok()) {
    auto changed = change(*out);
    if (!changed.ok()) out = changed.error();
    else if (*changed) {
      auto w = write_file_atomic(path, render_file(*out), 0600);
      if (!w.ok()) out = w.error();
    }
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return out;
}

std::string now_text() { return api::format_time(std::chrono::system_clock::now()); }

}  // namespace

const char* scope_name(Scope s) { return s == Scope::admin ? "admin" : "chat"; }

Result<Scope> parse_scope(std::string_view s) {
  if (s == "chat") return Scope::chat;
  if (s == "admin") return Scope::admin;
  return Error(Code::invalid_argument, "scope \"" + std::string(s) + "\" is not chat or admin");
}

Result<std::string> generate_token() {
  unsigned char buf[32];
  if (RAND_bytes(buf, sizeof buf) != 1) return Error(Code::internal, "the system random generator failed");
  return "nl_" + base64url(buf, sizeof buf);
}

std::string hash_token(std::string_view token) {
  Sha256 h;
  h.update(token);
  std::string d = h.finish();  // "sha256:<hex>"
  return d.substr(d.find(':') + 1);
}

Result<void> validate_token_name(std::string_view name) {
  if (name.empty() || name.size() > 64)
    return Error(Code::invalid_argument, "a token name has 1 to 64 characters");
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      return Error(Code::invalid_argument, "token name \"" + std::string(name) + "\": use letters, digits, '.', '_', '-'");
  return ok();
}

Result<void> add_token_to_file(const std::string& path, const std::string& name, Scope scope, std::string_view secret) {
  NURL_TRY(validate_token_name(name));
  auto r = update_file(path, [&](std::vector<FileEntry>& es) -> Result<bool> {
    for (const auto& e : es)
      if (e.info.name == name) return Error(Code::already_exists, "a token named \"" + name + "\" exists");
    es.push_back({{name, scope, now_text()}, hash_token(secret)});
    return true;
  });
  if (!r.ok()) return r.error();
  return ok();
}

Result<std::unique_ptr<TokenStore>> TokenStore::open(std::string path) {
  std::unique_ptr<TokenStore> s(new TokenStore(std::move(path)));
  NURL_TRY(s->reload());
  return s;
}

Result<void> TokenStore::reload() {
  NURL_ASSIGN(auto es, read_entries(path_));
  std::unique_lock lk(mu_);
  entries_.clear();
  for (auto& e : es) entries_.push_back({std::move(e.info), std::move(e.hash)});
  return ok();
}

Result<std::string> TokenStore::create(const std::string& name, Scope scope) {
  NURL_TRY(validate_token_name(name));
  NURL_ASSIGN(std::string secret, generate_token());
  NURL_TRY(add_token_to_file(path_, name, scope, secret));
  NURL_TRY(reload());
  return secret;
}

Result<void> TokenStore::revoke(const std::string& name) {
  auto r = update_file(path_, [&](std::vector<FileEntry>& es) -> Result<bool> {
    auto it = std::find_if(es.begin(), es.end(), [&](const FileEntry& e) { return e.info.name == name; });
    if (it == es.end()) return Error(Code::not_found, "no token named \"" + name + "\"");
    es.erase(it);
    return true;
  });
  if (!r.ok()) return r.error();
  std::unique_lock lk(mu_);
  entries_.clear();
  for (auto& e : *r) entries_.push_back({std::move(e.info), std::move(e.hash)});
  return ok();
}

std::vector<TokenInfo> TokenStore::list() const {
  std::shared_lock lk(mu_);
  std::vector<TokenInfo> out;
  for (const auto& e : entries_) out.push_back(e.info);
  return out;
}

bool TokenStore::empty() const {
  std::shared_lock lk(mu_);
  return entries_.empty();
}

std::optional<TokenInfo> TokenStore::verify(std::string_view token) const {
  if (token.empty()) return std::nullopt;
  const std::string h = hash_token(token);
  std::shared_lock lk(mu_);
  const Entry* found = nullptr;
  // Every stored hash is compared in full (no early exit), in constant time per comparison.
  for (const auto& e : entries_)
    if (CRYPTO_memcmp(e.hash.data(), h.data(), h.size()) == 0) found = &e;
  if (!found) return std::nullopt;
  return found->info;
}

}  // namespace nurl::auth
