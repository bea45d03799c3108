#include "store/sqlite/reader_pool.h"

namespace apollo::store::sqlite {

Result<ReaderPool::Lease> ReaderPool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Db> db = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(db));
    }
  }
  Result<std::unique_ptr<Db>> db = Db::Open(path_, /*create=*/false);
  if (!db.ok()) return db.status();
  APOLLO_RETURN_IF_ERROR((*db)->Exec("PRAGMA cache_size = -" + std::to_string(cache_kib_) +
                                     "; PRAGMA query_only = 1"));
  return Lease(this, std::move(*db));
}

void ReaderPool::Return(std::unique_ptr<Db> db) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(idle_.size()) < max_idle_) idle_.push_back(std::move(db));
}

Result<ReadTxn> ReadTxn::Begin(Db& db) {
  APOLLO_RETURN_IF_ERROR(db.Run("BEGIN"));
  return ReadTxn(&db);
}

}  // namespace apollo::store::sqlite
