#include "store/sqlite/sqlite_conn.h"

#include <cctype>

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

bool StartsWithWord(std::string_view s, std::string_view word) {
  size_t i = s.find_first_not_of(" \t\n");
  if (i == std::string_view::npos || s.size() - i < word.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    if (std::toupper(static_cast<unsigned char>(s[i + k])) != word[k]) return false;
  }
  return true;
}

// A row's INSERT ... SELECT <list> FROM @rows [WHERE true] becomes
// INSERT ... VALUES (<list>): SQLite opens a statement journal (a copy of
// every page the statement changes) for an INSERT ... SELECT, which may
// write many rows, but not for a one-row VALUES. `text` has \x01 where
// "FROM @rows" stood.
std::string InsertValues(std::string text) {
  size_t mark = text.find('\x01');
  std::string before = text.substr(0, mark);
  std::string after = text.substr(mark + 1);
  size_t select = std::string::npos;
  for (size_t at = before.size(); at-- > 0;) {
    if ((at == 0 || std::isspace(static_cast<unsigned char>(before[at - 1]))) &&
        StartsWithWord(std::string_view(before).substr(at), "SELECT")) {
      select = at;
      break;
    }
  }
  if (select == std::string::npos) return before + after;
  before.replace(select, 6, "VALUES (");
  while (!before.empty() && std::isspace(static_cast<unsigned char>(before.back()))) {
    before.pop_back();
  }
  if (StartsWithWord(after, "WHERE TRUE")) {
    size_t where = after.find_first_not_of(" \t\n");
    after = after.substr(after.find_first_not_of(" \t\n", where + 5) + 4);
  }
  return before + ")" + after;
}

// The statement in SQLite's words: $n -> ?n, u.<column> -> the parameter
// after the scalars, the clause naming @rows dropped (run once per row).
std::string Render(const sql::Template& t) {
  const bool insert = !t.pieces.empty() && StartsWithWord(t.pieces.front().text, "INSERT");
  std::string text = sql::Render(
      t,
      {[](int n) { return "?" + std::to_string(n); },
       [&t](const sql::Template::Piece& p) { return "?" + std::to_string(t.params + p.index + 1); },
       [insert](const sql::Template::Piece& p) {
         return insert && p.text == "FROM" ? std::string("\x01") : std::string();
       }});
  return text.find('\x01') == std::string::npos ? text : InsertValues(std::move(text));
}

void Bind(sqlite3_stmt* s, int i, const sql::ValueList& list, const sql::Value& v) {
  if (v.null) {
    sqlite3_bind_null(s, i);
  } else if (v.type == sql::Type::kText) {
    // The value outlives the step (the caller's Params / RowSet).
    std::string_view t = list.text(v);
    sqlite3_bind_text(s, i, t.empty() ? "" : t.data(), static_cast<int>(t.size()), SQLITE_STATIC);
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
  sqlite3_finalize(seq_read_);
  sqlite3_finalize(seq_write_);
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
    out->AddRow();
    for (int c = 0; c < n; ++c) {
      switch (sqlite3_column_type(p.stmt, c)) {
        case SQLITE_NULL:
          break;
        case SQLITE_INTEGER:
          out->SetInt(c, sqlite3_column_int64(p.stmt, c));
          break;
        case SQLITE_FLOAT:
          out->SetInt(c, static_cast<int64_t>(sqlite3_column_double(p.stmt, c)));
          break;
        default: {
          const auto* b = static_cast<const char*>(sqlite3_column_blob(p.stmt, c));
          out->SetText(c, b ? b : "", static_cast<size_t>(sqlite3_column_bytes(p.stmt, c)));
          break;
        }
      }
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
  for (int i = 0; i < p.params; ++i) Bind(p.stmt, i + 1, params, params.values()[i]);
  int64_t changed = 0;
  if (!rows) {
    APOLLO_RETURN_IF_ERROR(Step(p, out, changed));
    return changed;
  }
  const size_t cols = rows->columns().size();
  for (size_t r = 0; r < rows->size(); ++r) {
    for (size_t c = 0; c < cols; ++c) {
      Bind(p.stmt, p.params + static_cast<int>(c) + 1, *rows, rows->at(r, c));
    }
    APOLLO_RETURN_IF_ERROR(Step(p, out, changed));
  }
  return changed;
}

void SqliteConn::Exec(const sql::Statement& stmt, const sql::Params& params,
                      const sql::RowSet* rows, sql::Rows* out, int64_t* changed) {
  Result<Prepared*> p = Prepare(stmt);
  if (!p.ok()) {
    if (sticky_.ok()) sticky_ = p.status();
    return;
  }
  if (out) {
    *out = sql::Rows((*p)->stmt ? sqlite3_column_count((*p)->stmt) : 0);
    out->Reserve(rows ? rows->size() : 1);  // most statements here: a row per key
  }
  Result<int64_t> n = Run(**p, params, rows, out);
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

Result<int64_t> SqliteConn::NextVal(const char* name) {
  for (Seq& s : seqs_) {
    if (s.name == name) {
      s.dirty = true;
      return ++s.value;
    }
  }
  if (!seq_read_) {
    int rc = sqlite3_prepare_v3(db_, "SELECT value FROM sequences WHERE name = ?1", -1,
                                SQLITE_PREPARE_PERSISTENT, &seq_read_, nullptr);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, "nextval");
  }
  sqlite3_bind_text(seq_read_, 1, name, -1, SQLITE_STATIC);
  int rc = sqlite3_step(seq_read_);
  int64_t value = rc == SQLITE_ROW ? sqlite3_column_int64(seq_read_, 0) : 0;
  sqlite3_reset(seq_read_);
  if (rc != SQLITE_ROW) return Status::Internal(std::string("nextval: no sequence ") + name);
  seqs_.push_back(Seq{name, value + 1, true});
  return value + 1;
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
  for (Seq& seq : seqs_) {
    if (!seq.dirty) continue;
    if (!seq_write_) {
      int rc = sqlite3_prepare_v3(db_, "UPDATE sequences SET value = ?2 WHERE name = ?1", -1,
                                  SQLITE_PREPARE_PERSISTENT, &seq_write_, nullptr);
      if (rc != SQLITE_OK) return SqliteError(db_, rc, "saving sequences");
    }
    sqlite3_bind_text(seq_write_, 1, seq.name.data(), static_cast<int>(seq.name.size()),
                      SQLITE_STATIC);
    sqlite3_bind_int64(seq_write_, 2, seq.value);
    int rc = sqlite3_step(seq_write_);
    sqlite3_reset(seq_write_);
    if (rc != SQLITE_DONE) return SqliteError(db_, rc, "saving sequence " + seq.name);
    seq.dirty = false;
  }
  return Status::Ok();
}

}  // namespace apollo::store::sqlite
