#pragma once

// Read connections for queries, so reads never wait for the writer.
//
// Every read runs in its own read transaction (one snapshot for all its
// statements: SQLite BEGIN on a WAL file, PostgreSQL REPEATABLE READ READ
// ONLY). A connection found broken is dropped; the read is tried once more
// on a fresh connection, and if the database is still unreachable the call
// fails with kUnavailable. The next call connects again, so a restarted
// server is picked up without reopening the store.
//
// Thread-safety: Read() is thread-safe; each call uses its own connection.

#include <memory>
#include <mutex>
#include <vector>

#include "core/status.h"
#include "store/engine/sql.h"

namespace apollo::store::engine {

class ReaderPool {
 public:
  // `driver` must outlive the pool; at most `max_idle` connections are kept.
  ReaderPool(sql::Driver& driver, int max_idle) : driver_(driver), max_idle_(max_idle) {}

  // Runs fn(sql::Conn&) -> Result<T> or Status in a read transaction.
  template <typename Fn>
  auto Read(Fn fn) -> decltype(fn(std::declval<sql::Conn&>())) {
    using R = decltype(fn(std::declval<sql::Conn&>()));
    Status last;
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool reused = false;
      Result<std::unique_ptr<sql::Conn>> conn = Acquire(reused);
      if (!conn.ok()) return R(conn.status());
      Status st = (*conn)->Begin(sql::Access::kRead);
      if (st.ok()) {
        R r = fn(**conn);
        st = StatusOf(r);
        if (st.ok()) st = (*conn)->Commit();
        if (st.ok()) {
          Return(std::move(*conn));
          return r;
        }
        if (st.code() != StatusCode::kUnavailable) {
          (*conn)->Rollback();
          Return(std::move(*conn));
          return StatusOf(r).ok() ? R(st) : r;
        }
      }
      last = st;
      if (!reused) break;  // a fresh connection failed: the database is down
    }
    return R(last);
  }

 private:
  static Status StatusOf(const Status& s) { return s; }
  template <typename T>
  static Status StatusOf(const Result<T>& r) {
    return r.status();
  }
  Result<std::unique_ptr<sql::Conn>> Acquire(bool& reused);
  void Return(std::unique_ptr<sql::Conn> conn);

  sql::Driver& driver_;
  const int max_idle_;
  std::mutex mu_;
  std::vector<std::unique_ptr<sql::Conn>> idle_;  // guarded by mu_
};

}  // namespace apollo::store::engine
