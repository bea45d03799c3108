#pragma once

// Read connections for queries, so reads never wait for the writer.
//
// Every read runs in its own REPEATABLE READ, READ ONLY transaction (one
// snapshot for all its statements). A connection found broken is dropped;
// the read is tried once more on a fresh connection, and if the server is
// still unreachable the call fails with kUnavailable. The next call connects
// again, so a restarted server is picked up without reopening the store.
//
// Thread-safety: Read() is thread-safe; each call uses its own connection.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/postgres/pg_conn.h"

namespace apollo::store::postgres {

// What a query sees: the connection (for prepared statements) and the
// transaction it runs in.
class ReadCtx {
 public:
  ReadCtx(PgConn& conn, pqxx::transaction_base& txn) : conn_(conn), txn_(txn) {}
  template <typename... Args>
  pqxx::result Exec(const std::string& sql, Args&&... args) {
    return conn_.Exec(txn_, sql, std::forward<Args>(args)...);
  }

 private:
  PgConn& conn_;
  pqxx::transaction_base& txn_;
};

class ReaderPool {
 public:
  ReaderPool(std::string conn_string, int max_idle)
      : conn_string_(std::move(conn_string)), max_idle_(max_idle) {}

  // Runs fn(ReadCtx&) -> Result<T> or Status; pqxx exceptions become Status.
  template <typename Fn>
  auto Read(Fn fn) -> decltype(fn(std::declval<ReadCtx&>())) {
    using R = decltype(fn(std::declval<ReadCtx&>()));
    Status last;
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool reused = false;
      Result<std::unique_ptr<PgConn>> conn = Acquire(reused);
      if (!conn.ok()) return R(conn.status());
      try {
        using ReadOnly = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;
        ReadOnly txn((*conn)->conn());
        ReadCtx ctx(**conn, txn);
        R r = fn(ctx);
        txn.commit();
        Return(std::move(*conn));
        return r;
      } catch (const std::exception& e) {
        last = ToStatus("reading", e);
        if (last.code() != StatusCode::kUnavailable) {
          Return(std::move(*conn));
          return R(last);
        }
        if (!reused) return R(last);  // a fresh connection failed: the server is down
      }
    }
    return R(last);
  }

 private:
  Result<std::unique_ptr<PgConn>> Acquire(bool& reused);
  void Return(std::unique_ptr<PgConn> conn);

  const std::string conn_string_;
  const int max_idle_;
  std::mutex mu_;
  std::vector<std::unique_ptr<PgConn>> idle_;  // guarded by mu_
};

}  // namespace apollo::store::postgres
