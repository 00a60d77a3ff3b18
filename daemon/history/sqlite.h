// A thin RAII layer over the SQLite C API: Db (one connection) and Stmt (a prepared statement
// with bound parameters). Every value reaches SQL through bind(); there is no way to paste text
// into a query. Errors come back as Result with SQLite's message and the statement's purpose.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace nurl::history {

class Stmt {
 public:
  Stmt(Stmt&&) noexcept;
  Stmt& operator=(Stmt&&) noexcept;
  ~Stmt();

  // Parameters are numbered from 1, as in SQL's `?`.
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind_null(int i);

  // true: a row is ready; false: done. An error ends the statement.
  Result<bool> step();
  // Runs to completion (INSERT/UPDATE/DELETE).
  Result<void> run();

  int64_t int_at(int col) const;
  std::string text_at(int col) const;
  bool null_at(int col) const;

 private:
  friend class Db;
  Stmt(sqlite3* db, sqlite3_stmt* s, std::string what) : db_(db), s_(s), what_(std::move(what)) {}
  sqlite3* db_ = nullptr;
  sqlite3_stmt* s_ = nullptr;
  std::string what_;
  std::optional<Error> bind_error_;
};

class Db {
 public:
  // Opens (creating) the file; `busy_ms` is SQLite's busy_timeout.
  static Result<std::unique_ptr<Db>> open(const std::string& path, int busy_ms = 5000);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // `what` names the statement in errors ("listing conversations").
  Result<Stmt> prepare(std::string_view sql, std::string what);
  // Runs SQL text that takes no parameters (schema scripts, pragmas).
  Result<void> exec(std::string_view sql, const std::string& what);
  int64_t changes() const;
  int64_t last_insert_id() const;
  const std::string& path() const { return path_; }

 private:
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::string path_;
};

// BEGIN IMMEDIATE … COMMIT, rolled back unless commit() ran.
class Transaction {
 public:
  static Result<Transaction> begin(Db& db);
  Transaction(Transaction&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  ~Transaction();
  Result<void> commit();

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_;
};

}  // namespace nurl::history
