// Bearer tokens: named, scoped (`chat`: the web chat and inference; `admin`: also pulls, deletes,
// creates), stored only as SHA-256 hashes in <state>/tokens.json (mode 0600). A token is 32
// random bytes from the OS CSPRNG ("nl_" + base64url), so a plain hash is enough: nothing to
// guess, nothing to stretch. The secret is returned once, by create(); verify() compares the
// presented token's hash with every stored hash in constant time. Revocation changes the
// in-memory table at once, so it takes effect on the next request.
//
// The file is shared with `nurllama start` (which adds the token it generates): every change
// re-reads the file under an exclusive lock (tokens.json.lock) and writes it atomically.
#pragma once

#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nurl::auth {

enum class Scope { chat, admin };
const char* scope_name(Scope s);
Result<Scope> parse_scope(std::string_view s);

struct TokenInfo {
  std::string name;
  Scope scope = Scope::chat;
  std::string created_at;  // RFC 3339, UTC
};

// The secret as it is shown once: "nl_" + 43 base64url characters (256 bits from RAND_bytes).
Result<std::string> generate_token();
// Lower-case hex SHA-256 of the token text.
std::string hash_token(std::string_view token);
// Names: 1-64 of [A-Za-z0-9._-].
Result<void> validate_token_name(std::string_view name);

// Adds a token's hash to the file (creating it): the wizard's path, with no daemon running.
Result<void> add_token_to_file(const std::string& path, const std::string& name, Scope scope,
                               std::string_view secret);

class TokenStore {
 public:
  // Reads `path` (a missing file is an empty store).
  static Result<std::unique_ptr<TokenStore>> open(std::string path);

  // Creates NAME and returns its secret; already_exists when the name is taken.
  Result<std::string> create(const std::string& name, Scope scope);
  // not_found for an unknown name.
  Result<void> revoke(const std::string& name);
  std::vector<TokenInfo> list() const;
  // Who the token is, or nullopt (unknown or revoked).
  std::optional<TokenInfo> verify(std::string_view token) const;
  bool empty() const;
  // Re-reads the file (config reload: `nurllama start` may have added a token).
  Result<void> reload();

 private:
  struct Entry {
    TokenInfo info;
    std::string hash;  // hex SHA-256
  };
  explicit TokenStore(std::string path) : path_(std::move(path)) {}

  std::string path_;
  mutable std::shared_mutex mu_;
  std::vector<Entry> entries_;
};

}  // namespace nurl::auth
