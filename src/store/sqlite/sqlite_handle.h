#pragma once

// Thin RAII wrappers over the SQLite C API: a connection with a cache of
// prepared statements, and a statement that binds by position and resets
// itself when the borrower is done.
//
// Thread-safety: none. A Db and its statements belong to one thread at a
// time (the writer thread, or a reader that checked the connection out).

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/status.h"

namespace apollo::store::sqlite {

class Stmt {
 public:
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Binding: index is 1-based as in SQLite. Text and blobs are copied.
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& BindNull(int i);
  Stmt& Bind(int i, const std::optional<int64_t>& v);

  // Steps once: true when a row is available, false when done.
  Result<bool> Step();
  // Steps to completion, expecting no rows.
  Status Run();
  void Reset();

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::optional<int64_t> OptInt(int col) const;
  std::string Text(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// A borrowed cached statement, reset (and unbound) when it goes out of scope.
class StmtRef {
 public:
  explicit StmtRef(Stmt* s) : s_(s) {}
  ~StmtRef() { s_->Reset(); }
  StmtRef(const StmtRef&) = delete;
  StmtRef& operator=(const StmtRef&) = delete;
  Stmt* operator->() const { return s_; }
  Stmt& operator*() const { return *s_; }

 private:
  Stmt* s_;
};

class Db {
 public:
  static Result<std::unique_ptr<Db>> Open(const std::string& path, bool create);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs one or more statements without results.
  Status Exec(std::string_view sql);
  // The cached prepared statement for `sql` (prepared on first use). The
  // caller must finish with it before asking for the same sql again.
  Result<Stmt*> Prepare(const std::string& sql);
  // Runs one statement without results through the statement cache: no
  // re-parse for the BEGIN / SAVEPOINT / RELEASE / COMMIT every write
  // transaction (and BEGIN / COMMIT every read) runs.
  Status Run(const std::string& sql);
  int64_t LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }
  int64_t Changes() const { return sqlite3_changes64(db_); }
  sqlite3* raw() const { return db_; }

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::unordered_map<std::string, std::unique_ptr<Stmt>> cache_;
};

// Maps an SQLite result code to a Status: BUSY/LOCKED/IOERR/FULL ->
// Unavailable, CORRUPT/NOTADB -> DataLoss, CONSTRAINT -> AlreadyExists,
// anything else -> Internal.
Status SqliteError(sqlite3* db, int rc, std::string_view what);

}  // namespace apollo::store::sqlite
