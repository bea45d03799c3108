#pragma once

// A connection of the PostgreSQL driver (see pg_driver.h), on libpq in
// pipeline mode: Exec only queues a statement; the next Query, Count,
// Flush or Commit sends everything queued with one Sync and reads every
// result in one round trip. Statements are prepared on first use with the
// types of their parameters (the prepare rides in the same pipeline).
//
// Deadlock-free in blocking mode because only the last command before a Sync
// returns rows: the results of queued writes are a few bytes each, so the
// server never blocks on a full socket while the client is still sending.
//
// Thread-safety: one thread at a time.

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/engine/sql.h"

namespace apollo::store::postgres {

class PgConn final : public sql::Conn {
 public:
  // Connects (kUnavailable when the server cannot be reached), then runs
  // `setup` (session settings), if any.
  static Result<std::unique_ptr<PgConn>> Open(const std::string& conn_string,
                                              const char* setup = nullptr);
  ~PgConn() override;
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  // sql::Conn
  Status Begin(sql::Access access) override;
  Status Commit() override;
  void Rollback() override;
  void Exec(const sql::Statement& stmt, const sql::Params& params, const sql::RowSet* rows,
            sql::Rows* out, int64_t* changed) override;
  Status Flush() override;
  Status Script(std::string_view sql) override;
  bool healthy() const override;

 private:
  explicit PgConn(PGconn* conn) : conn_(conn) {}
  struct Prepared {
    std::string name;
    int params = 0;
    bool has_rows = false;
  };
  Result<Prepared*> Prepare(const sql::Statement& stmt, const sql::Params& params);
  // One command queued since the last Sync, and where its result goes.
  struct Cmd {
    const sql::Statement* prepare_for = nullptr;  // a prepare, or an execution
    sql::Rows* out = nullptr;
    int64_t* changed = nullptr;
    bool commit = false;  // COMMIT: its tag tells whether it rolled back
  };
  // Queues one execution of `stmt` (and its prepare on first use).
  Status Send(const sql::Statement& stmt, const sql::Params& params, const sql::RowSet* rows,
              Cmd cmd);
  // Queues a statement without parameters (BEGIN, COMMIT, ...).
  Status SendText(const char* sql, Cmd cmd);
  Status SendText(const char* sql);
  // Syncs and reads every queued result into its Cmd. Returns the first
  // error since the last round trip (sticky_ included).
  Status RoundTrip();
  // Reads one command's results.
  void Read(const Cmd& cmd, Status& first);
  Status ErrorOf(const PGresult* r, std::string_view what) const;
  Status Broken(std::string_view what) const;

  PGconn* conn_;
  std::unordered_map<const sql::Statement*, Prepared> cache_;
  std::vector<Cmd> queued_;  // since the last Sync
  Status sticky_;            // a send that failed since the last round trip
  int next_name_ = 0;
};

}  // namespace apollo::store::postgres
