#pragma once

// A connection of the SQLite driver (see sqlite_driver.h).
//
// Thread-safety: one thread at a time.

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/engine/sql.h"
#include "store/sqlite/checkpointer.h"

namespace apollo::store::sqlite {

// Maps an SQLite result code to a Status (see sqlite_driver.h).
Status SqliteError(sqlite3* db, int rc, std::string_view what);

// Opens `path` with extended result codes and a busy timeout.
Result<sqlite3*> OpenHandle(const std::string& path, bool create);

class SqliteConn final : public sql::Conn {
 public:
  // Takes `db`. A writer connection gets nextval().
  SqliteConn(sqlite3* db, sql::Role role);
  // Writer: WAL checkpoints move to `checkpointer` (its hook on this
  // connection); Idle() catches up when it falls behind.
  void AttachCheckpointer(std::unique_ptr<Checkpointer> checkpointer);
  ~SqliteConn() override;

  // sql::Conn
  Status Begin(sql::Access access) override;
  Status Commit() override;
  void Rollback() override;
  void Exec(const sql::Statement& stmt, const sql::Params& params, const sql::RowSet* rows,
            sql::Rows* out, int64_t* changed) override;
  Status Flush() override;
  Status Script(std::string_view sql) override;
  void Idle() override;

 private:
  struct Prepared {
    sqlite3_stmt* stmt = nullptr;
    int params = 0;  // scalar $n; row cells follow at params + 1 ...
    bool has_rows = false;
  };
  Result<Prepared*> Prepare(const sql::Statement& stmt);
  // Runs `p` once (no rows) or once per row; appends results to `out` if
  // given; returns the rows changed.
  Result<int64_t> Run(Prepared& p, const sql::Params& params, const sql::RowSet* rows,
                      sql::Rows* out);
  Status Step(Prepared& p, sql::Rows* out, int64_t& changed);
  Status Simple(const char* sql);  // BEGIN, COMMIT, ... through the cache
  Result<int64_t> NextVal(const char* name);
  Status SaveSequences();
  static void NextValFn(sqlite3_context* ctx, int argc, sqlite3_value** argv);

  sqlite3* db_;
  std::unique_ptr<Checkpointer> checkpointer_;  // writer only; may be null
  std::unordered_map<const sql::Statement*, Prepared> cache_;
  std::unordered_map<std::string, sqlite3_stmt*> simple_;  // BEGIN, COMMIT, ...
  Status sticky_;                                          // first failed Exec since the last Flush

  // nextval(): this transaction's view of the sequences table (a handful,
  // looked up by name on every call: a vector, no allocation).
  struct Seq {
    std::string name;
    int64_t value = 0;
    bool dirty = false;
  };
  std::vector<Seq> seqs_;             // cleared at Begin(kWrite)
  sqlite3_stmt* seq_read_ = nullptr;  // prepared on first use
  sqlite3_stmt* seq_write_ = nullptr;
};

}  // namespace apollo::store::sqlite
