#pragma once

// Moves WAL checkpoints off the commit path.
//
// SQLite's default auto-checkpoint runs inside the committing thread: every
// ~1000 WAL pages one commit also copies pages into the database file and
// fsyncs it, which is the p99 of group commit. Instead, the writer's
// connection reports the WAL size after each commit (sqlite3_wal_hook) and a
// thread with its own connection runs PASSIVE checkpoints, which never block
// the writer. Because a passive checkpoint can trail a busy writer forever,
// the writer itself runs one (between transactions) when the WAL passes a
// hard limit, so the WAL cannot grow without bound.
//
// The thread's connection must read the database once before it can
// checkpoint: until then its pager does not know the file is in WAL mode,
// and sqlite3_wal_checkpoint_v2 returns SQLITE_OK having done nothing
// (log and checkpointed frames -1). Loop() does that read first.
//
// The hook wakes the thread when the WAL has passed `soft_pages` and grown
// by a quarter of that since the last checkpoint. A checkpoint that copied
// every frame lets the writer's next transaction restart the WAL from its
// beginning; one held back by a reader does not, and the quarter keeps it
// from being woken again by every commit. Runs are at least `min_interval`
// apart: each costs two fsyncs (the WAL's, then the database file's), and
// the writer's commits wait behind them on the same disk. Under a writer
// that never pauses the WAL does not restart between runs; it grows to the
// hard limit, where the writer's own checkpoint finds most frames copied.
//
// Thread-safety: the hook runs on the writer thread, Loop() on its own; the
// rest is internal.

#include <sqlite3.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace apollo::store::sqlite {

class Checkpointer {
 public:
  // `soft_pages`: WAL size that wakes the background checkpoint.
  // Takes `db`, its own connection to the file.
  Checkpointer(sqlite3* db, int soft_pages, std::chrono::milliseconds min_interval);
  ~Checkpointer();

  // Installs the WAL hook on the writer's connection.
  void Attach(sqlite3* writer_db);
  // True when the writer should checkpoint itself now (WAL past the hard
  // limit). Call between transactions.
  bool WriterMustCheckpoint() const;

  // What the background thread has done, for tests and diagnostics.
  struct Stats {
    uint64_t checkpoints = 0;    // runs that reached the WAL
    int last_log = -1;           // frames in the WAL at the last run
    int last_checkpointed = -1;  // frames of them copied to the database
  };
  Stats stats() const;

 private:
  static int WalHook(void* self, sqlite3* db, const char* schema, int pages);
  void Loop();

  sqlite3* db_;  // checkpoint thread only
  const int soft_pages_;
  const std::chrono::milliseconds min_interval_;
  mutable std::mutex mu_;
  std::condition_variable cv_;       // the WAL grew (the hook) or stopping_
  std::condition_variable stop_cv_;  // stopping_ only
  int wal_pages_ = 0;      // guarded by mu_ (written by the writer thread)
  int wake_at_;            // guarded by mu_: WAL size that wakes the thread
  bool stopping_ = false;  // guarded by mu_
  Stats stats_;            // guarded by mu_
  bool wal_open_ = false;  // checkpoint thread only: db_ has read the file
  std::chrono::steady_clock::time_point last_run_{};  // checkpoint thread only
  std::thread thread_;
};

}  // namespace apollo::store::sqlite
