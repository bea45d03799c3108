#include "store/engine/reader_pool.h"

namespace apollo::store::engine {

Result<std::unique_ptr<sql::Conn>> ReaderPool::Acquire(bool& reused) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<sql::Conn> c = std::move(idle_.back());
      idle_.pop_back();
      reused = true;
      return c;
    }
  }
  reused = false;
  return driver_.Connect(sql::Role::kReader);
}

void ReaderPool::Return(std::unique_ptr<sql::Conn> conn) {
  if (!conn->healthy()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(idle_.size()) < max_idle_) idle_.push_back(std::move(conn));
}

}  // namespace apollo::store::engine
