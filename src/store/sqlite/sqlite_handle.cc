#include "store/sqlite/sqlite_handle.h"

namespace apollo::store::sqlite {

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string msg(what);
  msg += ": ";
  msg += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
      return Status::Unavailable(std::move(msg));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::DataLoss(std::move(msg));
    case SQLITE_CONSTRAINT:
      return Status::AlreadyExists(std::move(msg));
    default:
      return Status::Internal(std::move(msg));
  }
}

Stmt& Stmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}

Stmt& Stmt::Bind(int i, std::string_view v) {
  // A default string_view has data() == nullptr, which SQLite would bind as
  // NULL; an empty string is meant.
  sqlite3_bind_text(stmt_, i, v.data() ? v.data() : "", static_cast<int>(v.size()),
                    SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Stmt& Stmt::Bind(int i, const std::optional<int64_t>& v) {
  return v ? Bind(i, *v) : BindNull(i);
}

Result<bool> Stmt::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, sqlite3_sql(stmt_));
}

Status Stmt::Run() {
  for (;;) {
    Result<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::optional<int64_t> Stmt::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

std::string Stmt::Text(int col) const {
  const auto* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(static_cast<const char*>(p), n) : std::string();
}

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, bool create) {
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status st = SqliteError(raw, rc, "open " + path);
    sqlite3_close(raw);
    return st;
  }
  sqlite3_extended_result_codes(raw, 1);
  // Readers and the writer share the file; a checkpoint can briefly lock it.
  sqlite3_busy_timeout(raw, 5000);
  return std::unique_ptr<Db>(new Db(raw));
}

Db::~Db() {
  cache_.clear();  // finalize statements before closing
  sqlite3_close(db_);
}

Status Db::Exec(std::string_view sql) {
  char* err = nullptr;
  std::string s(sql);
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string what = err ? err : "exec";
    sqlite3_free(err);
    return SqliteError(db_, rc, what);
  }
  return Status::Ok();
}

Status Db::Run(const std::string& sql) {
  Result<Stmt*> st = Prepare(sql);
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  return s->Run();
}

Result<Stmt*> Db::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return it->second.get();
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "prepare " + sql);
  auto stmt = std::make_unique<Stmt>(db_, raw);
  Stmt* p = stmt.get();
  cache_.emplace(sql, std::move(stmt));
  return p;
}

}  // namespace apollo::store::sqlite
