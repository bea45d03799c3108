#include "store/sqlite/sqlite_conn.h"

#include "store/engine/sql_text.h"

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

Result<sqlite3*> OpenHandle(const std::string& path, bool create) {
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
  return raw;
}

namespace {

// The statement in SQLite's words: $n -> ?n, u.<column> -> the parameter
// after the scalars, the clause naming @rows dropped (run once per row).
std::string Render(const sql::Template& t) {
  return sql::Render(t, {[](int n) { return "?" + std::to_string(n); },
                         [&t](const sql::Template::Piece& p) {
                           return "?" + std::to_string(t.params + p.index + 1);
                         },
                         [](const sql::Template::Piece&) { return std::string(); }});
}

void Bind(sqlite3_stmt* s, int i, const sql::Value& v) {
  if (v.null) {
    sqlite3_bind_null(s, i);
  } else if (v.type == sql::Type::kText) {
    // The value outlives the step (the caller's Params / RowSet).
    sqlite3_bind_text(s, i, v.s.data(), static_cast<int>(v.s.size()), SQLITE_STATIC);
  } else {
    sqlite3_bind_int64(s, i, v.i);
  }
}

}  // namespace

SqliteConn::SqliteConn(sqlite3* db, sql::Role role) : db_(db) {
  if (role == sql::Role::kWriter) {
    sqlite3_create_function(db_, "nextval", 1, SQLITE_UTF8, this, &NextValFn, nullptr, nullptr);
  }
}

void SqliteConn::AttachCheckpointer(std::unique_ptr<Checkpointer> checkpointer) {
  checkpointer_ = std::move(checkpointer);
  checkpointer_->Attach(db_);
}

SqliteConn::~SqliteConn() {
  if (checkpointer_) {
    sqlite3_wal_hook(db_, nullptr, nullptr);  // the hook points at the checkpointer
    checkpointer_.reset();
  }
  for (auto& [key, p] : cache_) sqlite3_finalize(p.stmt);
  for (auto& [key, s] : simple_) sqlite3_finalize(s);
  sqlite3_close(db_);
}

Result<SqliteConn::Prepared*> SqliteConn::Prepare(const sql::Statement& stmt) {
  auto it = cache_.find(&stmt);
  if (it != cache_.end()) return &it->second;
  Result<sql::Template> t = sql::ParseTemplate(sql::KeepDialect(stmt.text, "sqlite"), stmt.columns);
  if (!t.ok()) return t.status();
  std::string text = Render(*t);
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_, text.c_str(), static_cast<int>(text.size()),
                              SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "prepare " + text);
  Prepared p{raw, t->params, t->has_rows};
  return &cache_.emplace(&stmt, p).first->second;
}

Status SqliteConn::Step(Prepared& p, sql::Rows* out, int64_t& changed) {
  for (;;) {
    int rc = sqlite3_step(p.stmt);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      Status st = SqliteError(db_, rc, sqlite3_sql(p.stmt));
      sqlite3_reset(p.stmt);
      return st;
    }
    if (!out) continue;
    int n = sqlite3_column_count(p.stmt);
    if (out->columns() != n) out->set_columns(n);
    for (int c = 0; c < n; ++c) {
      sql::Rows::Cell cell;
      switch (sqlite3_column_type(p.stmt, c)) {
        case SQLITE_NULL:
          break;
        case SQLITE_INTEGER:
          cell.null = false;
          cell.i = sqlite3_column_int64(p.stmt, c);
          break;
        case SQLITE_FLOAT:
          cell.null = false;
          cell.i = static_cast<int64_t>(sqlite3_column_double(p.stmt, c));
          break;
        default: {
          cell.null = false;
          const auto* b = static_cast<const char*>(sqlite3_column_blob(p.stmt, c));
          cell.s.assign(b ? b : "", static_cast<size_t>(sqlite3_column_bytes(p.stmt, c)));
          break;
        }
      }
      out->Append(std::move(cell));
    }
  }
  if (!sqlite3_stmt_readonly(p.stmt)) changed += sqlite3_changes64(db_);
  sqlite3_reset(p.stmt);
  return Status::Ok();
}

Result<int64_t> SqliteConn::Run(Prepared& p, const sql::Params& params, const sql::RowSet* rows,
                                sql::Rows* out) {
  if (!p.stmt) return int64_t{0};  // nothing in this dialect (a /*@pg*/ only statement)
  if (static_cast<int>(params.values().size()) != p.params || (rows != nullptr) != p.has_rows) {
    return Status::Internal(std::string("parameters do not fit the statement: ") +
                            sqlite3_sql(p.stmt));
  }
  for (int i = 0; i < p.params; ++i) Bind(p.stmt, i + 1, params.values()[i]);
  int64_t changed = 0;
  if (!rows) {
    APOLLO_RETURN_IF_ERROR(Step(p, out, changed));
    return changed;
  }
  const size_t cols = rows->columns().size();
  for (size_t r = 0; r < rows->size(); ++r) {
    for (size_t c = 0; c < cols; ++c) {
      Bind(p.stmt, p.params + static_cast<int>(c) + 1, rows->at(r, c));
    }
    APOLLO_RETURN_IF_ERROR(Step(p, out, changed));
  }
  return changed;
}

void SqliteConn::Exec(const sql::Statement& stmt, const sql::Params& params,
                      const sql::RowSet* rows, sql::Rows* out, int64_t* changed) {
  Result<Prepared*> p = Prepare(stmt);
  Result<int64_t> n = p.status();
  if (p.ok()) {
    if (out) *out = sql::Rows((*p)->stmt ? sqlite3_column_count((*p)->stmt) : 0);
    n = Run(**p, params, rows, out);
  }
  if (!n.ok()) {
    if (sticky_.ok()) sticky_ = n.status();
    return;
  }
  if (changed) *changed = *n;
}

Status SqliteConn::Flush() {
  Status st = sticky_;
  sticky_ = Status::Ok();
  return st;
}

Status SqliteConn::Simple(const char* sql) {
  auto it = simple_.find(sql);
  if (it == simple_.end()) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, sql);
    it = simple_.emplace(sql, raw).first;
  }
  int rc = sqlite3_step(it->second);
  sqlite3_reset(it->second);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return SqliteError(db_, rc, sql);
  return Status::Ok();
}

Status SqliteConn::Begin(sql::Access access) {
  sticky_ = Status::Ok();
  if (access == sql::Access::kRead) return Simple("BEGIN");
  seqs_.clear();  // read again under this transaction's lock
  return Simple("BEGIN IMMEDIATE");
}

Status SqliteConn::Commit() {
  Status st = Flush();
  if (st.ok()) st = SaveSequences();
  if (st.ok()) st = Simple("COMMIT");
  if (!st.ok()) Rollback();
  return st;
}

void SqliteConn::Rollback() {
  sticky_ = Status::Ok();
  if (!sqlite3_get_autocommit(db_)) (void)Simple("ROLLBACK");
}

Status SqliteConn::Script(std::string_view sql) {
  std::string text = sql::KeepDialect(sql, "sqlite");
  char* err = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string what = err ? err : "script";
    sqlite3_free(err);
    return SqliteError(db_, rc, what);
  }
  return Status::Ok();
}

void SqliteConn::Idle() {
  if (checkpointer_ && checkpointer_->WriterMustCheckpoint()) {
    // The background checkpoint fell behind a busy writer: catch up here,
    // between transactions, so the WAL can restart from its beginning.
    sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  }
}

// ------------------------------------------------------------ sequences --

Result<int64_t> SqliteConn::NextVal(const std::string& name) {
  auto it = seqs_.find(name);
  if (it == seqs_.end()) {
    sqlite3_stmt* s = nullptr;
    int rc =
        sqlite3_prepare_v2(db_, "SELECT value FROM sequences WHERE name = ?1", -1, &s, nullptr);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, "nextval");
    sqlite3_bind_text(s, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
    rc = sqlite3_step(s);
    int64_t value = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW) return Status::Internal("nextval: no sequence " + name);
    it = seqs_.emplace(name, Seq{value, false}).first;
  }
  it->second.dirty = true;
  return ++it->second.value;
}

void SqliteConn::NextValFn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto* self = static_cast<SqliteConn*>(sqlite3_user_data(ctx));
  const unsigned char* name = argc == 1 ? sqlite3_value_text(argv[0]) : nullptr;
  if (!name) {
    sqlite3_result_error(ctx, "nextval needs a sequence name", -1);
    return;
  }
  Result<int64_t> v = self->NextVal(reinterpret_cast<const char*>(name));
  if (!v.ok()) {
    sqlite3_result_error(ctx, v.status().message().c_str(), -1);
    return;
  }
  sqlite3_result_int64(ctx, *v);
}

Status SqliteConn::SaveSequences() {
  for (auto& [name, seq] : seqs_) {
    if (!seq.dirty) continue;
    sqlite3_stmt* s = nullptr;
    int rc =
        sqlite3_prepare_v2(db_, "UPDATE sequences SET value = ?2 WHERE name = ?1", -1, &s, nullptr);
    if (rc == SQLITE_OK) {
      sqlite3_bind_text(s, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
      sqlite3_bind_int64(s, 2, seq.value);
      rc = sqlite3_step(s);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return SqliteError(db_, rc, "saving sequence " + name);
    seq.dirty = false;
  }
  return Status::Ok();
}

}  // namespace apollo::store::sqlite
