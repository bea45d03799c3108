#include "store/postgres/reader_pool.h"

namespace apollo::store::postgres {

Result<std::unique_ptr<PgConn>> ReaderPool::Acquire(bool& reused) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<PgConn> c = std::move(idle_.back());
      idle_.pop_back();
      reused = true;
      return c;
    }
  }
  reused = false;
  return PgConn::Open(conn_string_);
}

void ReaderPool::Return(std::unique_ptr<PgConn> conn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(idle_.size()) < max_idle_) idle_.push_back(std::move(conn));
}

}  // namespace apollo::store::postgres
