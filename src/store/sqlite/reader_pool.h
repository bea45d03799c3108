#pragma once

// Read connections for queries, so reads never wait for the writer (WAL lets
// readers see the last committed state while a write transaction is open).
//
// Thread-safety: Acquire() is thread-safe; a Lease is used by one thread.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/sqlite/sqlite_handle.h"

namespace apollo::store::sqlite {

class ReaderPool {
 public:
  ReaderPool(std::string path, int max_idle, int cache_kib)
      : path_(std::move(path)), max_idle_(max_idle), cache_kib_(cache_kib) {}

  class Lease {
   public:
    Lease(ReaderPool* pool, std::unique_ptr<Db> db) : pool_(pool), db_(std::move(db)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = default;
    ~Lease() {
      if (db_) pool_->Return(std::move(db_));
    }
    Db& db() { return *db_; }

   private:
    ReaderPool* pool_;
    std::unique_ptr<Db> db_;
  };

  // An idle connection, or a new one.
  Result<Lease> Acquire();

 private:
  void Return(std::unique_ptr<Db> db);

  const std::string path_;
  const int max_idle_;
  const int cache_kib_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Db>> idle_;  // guarded by mu_
};

// A read transaction: every statement inside sees one snapshot. Ends (with
// COMMIT, which for a reader only releases the snapshot) on destruction.
class ReadTxn {
 public:
  static Result<ReadTxn> Begin(Db& db);
  ReadTxn(ReadTxn&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  ReadTxn& operator=(ReadTxn&&) = delete;
  ~ReadTxn() {
    if (db_) (void)db_->Run("COMMIT");
  }

 private:
  explicit ReadTxn(Db* db) : db_(db) {}
  Db* db_;
};

}  // namespace apollo::store::sqlite
