#include "store/sqlite/checkpointer.h"

#include <algorithm>

namespace apollo::store::sqlite {
namespace {
constexpr int kHardLimitFactor = 8;
}  // namespace

Checkpointer::Checkpointer(sqlite3* db, int soft_pages, std::chrono::milliseconds min_interval)
    : db_(db), soft_pages_(soft_pages), min_interval_(min_interval), wake_at_(soft_pages) {
  thread_ = std::thread([this] { Loop(); });
}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  stop_cv_.notify_all();
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
    // Smaller than at the last commit: the WAL restarted.
    if (pages < self->wal_pages_) self->wake_at_ = self->soft_pages_;
    self->wal_pages_ = pages;
    wake = pages >= self->wake_at_;
  }
  if (wake) self->cv_.notify_one();
  return SQLITE_OK;
}

void Checkpointer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || wal_pages_ >= wake_at_; });
    if (stopping_) return;
    // At most one run per min_interval_ (see the header). On stop_cv_, which
    // the commits' hook does not notify: they would wake this wait for nothing.
    if (stop_cv_.wait_until(lock, last_run_ + min_interval_, [this] { return stopping_; })) {
      return;
    }
    last_run_ = std::chrono::steady_clock::now();
    // Until the next run, only a WAL grown by a quarter more (or restarted
    // and filled again) wakes us.
    wake_at_ = wal_pages_ + std::max(1, soft_pages_ / 4);
    lock.unlock();
    if (!wal_open_) {
      // A first read opens the WAL on this connection (see the header).
      wal_open_ = sqlite3_exec(db_, "SELECT 1 FROM sqlite_master LIMIT 1", nullptr, nullptr,
                               nullptr) == SQLITE_OK;
    }
    // PASSIVE: copies what it can without waiting for the writer or readers.
    // A failure (busy) is harmless: the WAL's growth wakes us again, and the
    // writer's hard limit bounds it.
    int log = -1;
    int copied = -1;
    sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
    lock.lock();
    if (log >= 0) {
      ++stats_.checkpoints;
      stats_.last_log = log;
      stats_.last_checkpointed = copied;
    }
  }
}

Checkpointer::Stats Checkpointer::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace apollo::store::sqlite
