#include "store/postgres/pg_conn.h"

#include <charconv>
#include <cstring>

#include "store/engine/sql_text.h"
#include "store/postgres/pg_text.h"

namespace apollo::store::postgres {
namespace {

// Type OIDs (pg_type.dat).
constexpr Oid kInt8 = 20, kInt2 = 21, kInt4 = 23, kText = 25, kOid = 26, kBool = 16;
constexpr Oid kInt8Array = 1016, kTextArray = 1009, kBoolArray = 1000;

Oid ScalarOid(sql::Type t) {
  switch (t) {
    case sql::Type::kInt:
      return kInt8;
    case sql::Type::kBool:
      return kBool;
    case sql::Type::kText:
      return kText;
  }
  return kText;
}

Oid ArrayOid(sql::Type t) {
  switch (t) {
    case sql::Type::kInt:
      return kInt8Array;
    case sql::Type::kBool:
      return kBoolArray;
    case sql::Type::kText:
      return kTextArray;
  }
  return kTextArray;
}

// The statement in PostgreSQL's words: @rows becomes unnest over one array
// parameter per column, after the scalars.
std::string Render(const sql::Template& t, std::span<const sql::Column> columns) {
  auto rows = [&](const sql::Template::Piece& p) {
    std::string out = p.text + " unnest(";
    std::string names;
    for (size_t c = 0; c < columns.size(); ++c) {
      out += (c ? ", $" : "$") + std::to_string(t.params + static_cast<int>(c) + 1) +
             "::" + std::string(ArrayType(columns[c].type));
      names += (c ? ", " : "") + std::string(columns[c].name);
    }
    return out + ") AS u(" + names + ")";
  };
  return sql::Render(t, {[](int n) { return "$" + std::to_string(n); },
                         [](const sql::Template::Piece& p) { return "u." + p.text; }, rows});
}

std::string Trimmed(const char* s) {
  std::string m = s ? s : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

sql::Rows ToRows(const PGresult* r) {
  const int cols = PQnfields(r);
  const int n = PQntuples(r);
  sql::Rows rows(cols);
  rows.Reserve(static_cast<size_t>(n));
  std::vector<Oid> types(static_cast<size_t>(cols));
  for (int c = 0; c < cols; ++c) types[c] = PQftype(r, c);
  for (int i = 0; i < n; ++i) {
    rows.AddRow();
    for (int c = 0; c < cols; ++c) {
      if (PQgetisnull(r, i, c)) continue;
      const char* v = PQgetvalue(r, i, c);
      const int len = PQgetlength(r, i, c);
      Oid t = types[c];
      if (t == kInt8 || t == kInt4 || t == kInt2 || t == kOid) {
        int64_t n = 0;
        std::from_chars(v, v + len, n);
        rows.SetInt(c, n);
      } else if (t == kBool) {
        rows.SetInt(c, v[0] == 't' ? 1 : 0);
      } else {
        rows.SetText(c, v, static_cast<size_t>(len));
      }
    }
  }
  return rows;
}

}  // namespace

Result<std::unique_ptr<PgConn>> PgConn::Open(const std::string& conn_string, const char* setup) {
  PGconn* c = PQconnectdb(conn_string.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = Trimmed(PQerrorMessage(c));
    PQfinish(c);
    return Status::Unavailable("connecting: PostgreSQL unreachable: " + msg);
  }
  // NOTICEs ("relation already exists, skipping") are not errors: quiet.
  PQsetNoticeProcessor(
      c, [](void*, const char*) {}, nullptr);
  if (PQenterPipelineMode(c) != 1) {
    std::string msg = Trimmed(PQerrorMessage(c));
    PQfinish(c);
    return Status::Internal("entering pipeline mode: " + msg);
  }
  auto conn = std::unique_ptr<PgConn>(new PgConn(c));
  if (setup != nullptr) {
    Status st = conn->SendText(setup);
    if (st.ok()) st = conn->RoundTrip();
    if (!st.ok()) return st.WithPrefix("setting up the connection");
  }
  return conn;
}

PgConn::~PgConn() { PQfinish(conn_); }

bool PgConn::healthy() const { return PQstatus(conn_) == CONNECTION_OK; }

Status PgConn::Broken(std::string_view what) const {
  return Status::Unavailable(std::string(what) +
                             ": PostgreSQL unreachable: " + Trimmed(PQerrorMessage(conn_)));
}

Status PgConn::ErrorOf(const PGresult* r, std::string_view what) const {
  if (PQstatus(conn_) != CONNECTION_OK) return Broken(what);
  const char* state_c = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string state = state_c ? state_c : "";
  std::string msg = Trimmed(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
  std::string where(what);
  if (state == "40001" || state == "40P01" || state == "23505") {
    return Status::Aborted(where + ": concurrent write conflict: " + msg);
  }
  // Class 08: connection exception; 57P: operator intervention (shutdown).
  if (state.starts_with("08") || state.starts_with("57P") || state.empty()) {
    return Status::Unavailable(where + ": PostgreSQL unavailable (" + state + "): " + msg);
  }
  return Status::Internal(where + ": PostgreSQL error " + state + ": " + msg);
}

Result<PgConn::Prepared*> PgConn::Prepare(const sql::Statement& stmt, const sql::Params& params) {
  auto it = cache_.find(&stmt);
  if (it != cache_.end()) return &it->second;
  Result<sql::Template> t = sql::ParseTemplate(sql::KeepDialect(stmt.text, "pg"), stmt.columns);
  if (!t.ok()) return t.status();
  std::string text = Render(*t, stmt.columns);
  std::vector<Oid> types;
  for (const sql::Value& v : params.values()) types.push_back(ScalarOid(v.type));
  if (t->has_rows) {
    for (const sql::Column& c : stmt.columns) types.push_back(ArrayOid(c.type));
  }
  Prepared p{"a" + std::to_string(++next_name_), t->params, t->has_rows};
  if (PQsendPrepare(conn_, p.name.c_str(), text.c_str(), static_cast<int>(types.size()),
                    types.data()) != 1) {
    return Broken("preparing");
  }
  queued_.push_back(Cmd{&stmt});
  return &cache_.emplace(&stmt, std::move(p)).first->second;
}

Status PgConn::Send(const sql::Statement& stmt, const sql::Params& params, const sql::RowSet* rows,
                    Cmd cmd) {
  Result<Prepared*> p = Prepare(stmt, params);
  if (!p.ok()) return p.status();
  if (static_cast<int>(params.values().size()) != (*p)->params ||
      (rows != nullptr) != (*p)->has_rows) {
    return Status::Internal(std::string("parameters do not fit the statement: ") + stmt.text);
  }
  std::vector<std::string> text;
  std::vector<const char*> values;
  text.reserve(params.values().size() + (rows ? rows->columns().size() : 0));
  for (const sql::Value& v : params.values()) {
    if (v.null) {
      text.emplace_back();
    } else if (v.type == sql::Type::kText) {
      text.push_back(CleanText(params.text(v)));
    } else if (v.type == sql::Type::kBool) {
      text.emplace_back(v.i ? "t" : "f");
    } else {
      text.push_back(std::to_string(v.i));
    }
  }
  if (rows) {
    for (size_t c = 0; c < rows->columns().size(); ++c) text.push_back(ArrayLiteral(*rows, c));
  }
  for (size_t i = 0; i < text.size(); ++i) {
    bool null = i < params.values().size() && params.values()[i].null;
    values.push_back(null ? nullptr : text[i].c_str());
  }
  if (PQsendQueryPrepared(conn_, (*p)->name.c_str(), static_cast<int>(values.size()), values.data(),
                          nullptr, nullptr, 0) != 1) {
    return Broken("sending");
  }
  queued_.push_back(cmd);
  return Status::Ok();
}

Status PgConn::SendText(const char* sql) { return SendText(sql, Cmd{}); }

Status PgConn::SendText(const char* sql, Cmd cmd) {
  if (PQsendQueryParams(conn_, sql, 0, nullptr, nullptr, nullptr, nullptr, 0) != 1) {
    return Broken(sql);
  }
  queued_.push_back(cmd);
  return Status::Ok();
}

void PgConn::Read(const Cmd& cmd, Status& first) {
  while (PGresult* r = PQgetResult(conn_)) {
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_FATAL_ERROR || st == PGRES_NONFATAL_ERROR || st == PGRES_BAD_RESPONSE) {
      if (first.ok()) first = ErrorOf(r, "PostgreSQL statement");
      if (cmd.prepare_for) cache_.erase(cmd.prepare_for);  // prepare again next time
    } else if (st == PGRES_PIPELINE_ABORTED) {
      if (cmd.prepare_for) cache_.erase(cmd.prepare_for);
      if (first.ok()) first = Status::Internal("PostgreSQL pipeline aborted");
    } else {
      if (cmd.out) *cmd.out = ToRows(r);
      if (cmd.changed) {
        const char* tuples = PQcmdTuples(r);
        std::from_chars(tuples, tuples + std::strlen(tuples), *cmd.changed);
      }
      // COMMIT of a failed transaction answers ROLLBACK, not an error.
      if (cmd.commit && std::strcmp(PQcmdStatus(r), "ROLLBACK") == 0 && first.ok()) {
        first = Status::Aborted("committing: the transaction had failed and was rolled back");
      }
    }
    PQclear(r);
  }
}

Status PgConn::RoundTrip() {
  Status first = sticky_;
  sticky_ = Status::Ok();
  if (queued_.empty()) return first;
  std::vector<Cmd> cmds;
  cmds.swap(queued_);
  if (PQpipelineSync(conn_) != 1) return first.ok() ? Broken("syncing") : first;
  for (const Cmd& cmd : cmds) {
    Read(cmd, first);
    if (PQstatus(conn_) != CONNECTION_OK) break;
  }
  // The Sync's own result ends the round (a stray end-of-command marker
  // may come first; a bounded number of tries, never a spin).
  for (int tries = 0; tries < 4 && PQstatus(conn_) == CONNECTION_OK; ++tries) {
    PGresult* r = PQgetResult(conn_);
    if (!r) continue;
    bool sync = PQresultStatus(r) == PGRES_PIPELINE_SYNC;
    PQclear(r);
    if (sync) break;
  }
  if (PQstatus(conn_) != CONNECTION_OK && first.ok()) first = Broken("reading");
  return first;
}

void PgConn::Exec(const sql::Statement& stmt, const sql::Params& params, const sql::RowSet* rows,
                  sql::Rows* out, int64_t* changed) {
  if (rows && rows->empty()) {  // over no rows: nothing to do
    if (out) *out = sql::Rows();
    if (changed) *changed = 0;
    return;
  }
  Status st = Send(stmt, params, rows, Cmd{nullptr, out, changed});
  if (!st.ok() && sticky_.ok()) sticky_ = st;
}

Status PgConn::Flush() { return RoundTrip(); }

Status PgConn::Begin(sql::Access access) {
  sticky_ = Status::Ok();
  return SendText(access == sql::Access::kRead ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
                                               : "BEGIN");
}

Status PgConn::Commit() {
  Cmd cmd;
  cmd.commit = true;
  Status st = SendText("COMMIT", cmd);
  if (st.ok()) st = RoundTrip();
  if (st.code() == StatusCode::kUnavailable) {
    return Status::Unavailable(
        "committing: PostgreSQL connection lost; outcome unknown, retry "
        "(writes are idempotent): " +
        st.message());
  }
  return st;
}

void PgConn::Rollback() {
  if (PQstatus(conn_) != CONNECTION_OK) return;
  if (SendText("ROLLBACK").ok()) (void)RoundTrip();
  sticky_ = Status::Ok();
}

Status PgConn::Script(std::string_view sql) {
  APOLLO_RETURN_IF_ERROR(Flush());
  std::string text = sql::KeepDialect(sql, "pg");
  if (PQexitPipelineMode(conn_) != 1) return Status::Internal("leaving pipeline mode");
  PGresult* r = PQexec(conn_, text.c_str());
  ExecStatusType st = PQresultStatus(r);
  Status out = (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) ? Status::Ok()
                                                                 : ErrorOf(r, "running script");
  PQclear(r);
  if (PQenterPipelineMode(conn_) != 1 && out.ok()) out = Broken("entering pipeline mode");
  return out;
}

}  // namespace apollo::store::postgres
