#include "history/sqlite.h"

#include <sqlite3.h>

namespace nurl::history {

namespace {

Error sql_error(sqlite3* db, int rc, const std::string& what) {
  std::string msg = what + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  Code code = Code::io;
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
    code = Code::busy;
    msg += " (the history database is locked by another process)";
  } else if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
    code = Code::corrupt;
  } else if (rc == SQLITE_CONSTRAINT) {
    code = Code::invalid_argument;
  }
  return Error(code, msg);
}

}  // namespace

Stmt::Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_), what_(std::move(o.what_)), bind_error_(std::move(o.bind_error_)) {
  o.s_ = nullptr;
}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    if (s_) sqlite3_finalize(s_);
    db_ = o.db_;
    s_ = o.s_;
    what_ = std::move(o.what_);
    bind_error_ = std::move(o.bind_error_);
    o.s_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() {
  if (s_) sqlite3_finalize(s_);
}

Stmt& Stmt::bind(int i, int64_t v) {
  int rc = sqlite3_bind_int64(s_, i, v);
  if (rc != SQLITE_OK && !bind_error_) bind_error_ = sql_error(db_, rc, what_ + " (parameter " + std::to_string(i) + ")");
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  int rc = sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && !bind_error_) bind_error_ = sql_error(db_, rc, what_ + " (parameter " + std::to_string(i) + ")");
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  int rc = sqlite3_bind_null(s_, i);
  if (rc != SQLITE_OK && !bind_error_) bind_error_ = sql_error(db_, rc, what_ + " (parameter " + std::to_string(i) + ")");
  return *this;
}

Result<bool> Stmt::step() {
  if (bind_error_) return *bind_error_;
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sql_error(db_, rc, what_);
}

Result<void> Stmt::run() {
  while (true) {
    NURL_ASSIGN(bool row, step());
    if (!row) return ok();
  }
}

int64_t Stmt::int_at(int col) const { return sqlite3_column_int64(s_, col); }

std::string Stmt::text_at(int col) const {
  const unsigned char* p = sqlite3_column_text(s_, col);
  int n = sqlite3_column_bytes(s_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

bool Stmt::null_at(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }

Result<std::unique_ptr<Db>> Db::open(const std::string& path, int busy_ms) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error e = sql_error(raw, rc, "opening " + path);
    sqlite3_close(raw);
    return e;
  }
  std::unique_ptr<Db> db(new Db(raw, path));
  sqlite3_busy_timeout(raw, busy_ms);
  sqlite3_extended_result_codes(raw, 0);
  return db;
}

Db::~Db() {
  if (db_) sqlite3_close(db_);
}

Result<Stmt> Db::prepare(std::string_view sql, std::string what) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &s, nullptr);
  if (rc != SQLITE_OK) return sql_error(db_, rc, what);
  return Stmt(db_, s, std::move(what));
}

Result<void> Db::exec(std::string_view sql, const std::string& what) {
  std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = what + ": " + (err ? err : sqlite3_errstr(rc));
    sqlite3_free(err);
    Error e = sql_error(nullptr, rc, what);
    e.msg = msg;
    return e;
  }
  return ok();
}

int64_t Db::changes() const { return sqlite3_changes64(db_); }
int64_t Db::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

Result<Transaction> Transaction::begin(Db& db) {
  NURL_TRY(db.exec("BEGIN IMMEDIATE", "starting a transaction"));
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_) (void)db_->exec("ROLLBACK", "rolling back");
}

Result<void> Transaction::commit() {
  Db* db = db_;
  db_ = nullptr;
  return db->exec("COMMIT", "committing");
}

}  // namespace nurl::history
