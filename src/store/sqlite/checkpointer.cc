#include "store/sqlite/checkpointer.h"

namespace apollo::store::sqlite {
namespace {
constexpr int kHardLimitFactor = 8;
}  // namespace

Checkpointer::Checkpointer(sqlite3* db, int soft_pages) : db_(db), soft_pages_(soft_pages) {
  thread_ = std::thread([this] { Loop(); });
}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  sqlite3_close(db_);
}

void Checkpointer::Attach(sqlite3* writer_db) { sqlite3_wal_hook(writer_db, &WalHook, this); }

bool Checkpointer::WriterMustCheckpoint() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wal_pages_ >= soft_pages_ * kHardLimitFactor;
}

int Checkpointer::WalHook(void* arg, sqlite3*, const char*, int pages) {
  auto* self = static_cast<Checkpointer*>(arg);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(self->mu_);
    self->wal_pages_ = pages;
    wake = pages >= self->soft_pages_;
  }
  if (wake) self->cv_.notify_one();
  return SQLITE_OK;
}

void Checkpointer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || wal_pages_ >= soft_pages_; });
    if (stopping_) return;
    wal_pages_ = 0;  // the next commit reports the size again
    lock.unlock();
    // PASSIVE: copies what it can without waiting for the writer or readers.
    // A failure (busy) is harmless: the next commit wakes us again.
    sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    lock.lock();
  }
}

}  // namespace apollo::store::sqlite
