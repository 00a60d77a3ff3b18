// nurl::Error and nurl::Result<T>: the one error type of the project.
// Every fallible function returns Result<T>; the message carries context and, where it helps,
// a hint for the person who will read it. HTTP status mapping lives in one place (http_status()).
#pragma once

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace nurl {

enum class Code {
  invalid_argument,  // bad input from a caller (400)
  not_found,         // unknown model, missing key or tensor (404)
  already_exists,    // (409)
  unsupported,       // valid but not handled: an unknown tensor type, an unknown architecture (400)
  corrupt,           // a file whose bytes make no sense (422 on upload, 500 on load)
  io,                // the OS said no (500)
  busy,              // queue full (503)
  cancelled,         // the caller went away or asked to stop (499-like)
  internal,          // a bug (500)
  rate_limited,      // this caller already has as much running as it may (429, with Retry-After)
  no_space,          // the disk (or quota) is full (507)
};

const char* code_name(Code c);
int http_status(Code c);

struct Error {
  Code code = Code::internal;
  std::string msg;

  Error() = default;
  Error(Code c, std::string m) : code(c), msg(std::move(m)) {}

  // Prefixes context ("loading model.gguf: " + msg), keeping the code.
  Error context(const std::string& where) const { return Error(code, where + ": " + msg); }
};

// Result<T>: either a value or an Error. Deliberately small (std::expected is C++23).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error err) : v_(std::in_place_index<1>, std::move(err)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error err) : err_(std::move(err)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { assert(!ok_); return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

inline Result<void> ok() { return {}; }

// Propagate an error from an expression returning Result<...>.
#define NURL_TRY(expr)                                   \
  do {                                                   \
    auto nurl_try_r_ = (expr);                           \
    if (!nurl_try_r_.ok()) return nurl_try_r_.error();   \
  } while (0)

#define NURL_CONCAT_INNER_(a, b) a##b
#define NURL_CONCAT_(a, b) NURL_CONCAT_INNER_(a, b)
// NURL_ASSIGN(auto x, f()) : declares x from f()'s value or returns its error.
#define NURL_ASSIGN(decl, expr) NURL_ASSIGN_IMPL_(decl, expr, NURL_CONCAT_(nurl_r_, __LINE__))
#define NURL_ASSIGN_IMPL_(decl, expr, tmp)   \
  auto tmp = (expr);                         \
  if (!tmp.ok()) return tmp.error();         \
  decl = std::move(tmp).value()

// Programmer bugs only; never for bad input.
#define NURL_ASSERT(cond) assert(cond)

}  // namespace nurl
