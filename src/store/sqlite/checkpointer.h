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
// Thread-safety: OnCommit() is called on the writer thread; the rest is
// internal.

#include <sqlite3.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace apollo::store::sqlite {

class Checkpointer {
 public:
  // `soft_pages`: WAL size that wakes the background checkpoint.
  // Takes `db`, its own connection to the file.
  Checkpointer(sqlite3* db, int soft_pages);
  ~Checkpointer();

  // Installs the WAL hook on the writer's connection.
  void Attach(sqlite3* writer_db);
  // True when the writer should checkpoint itself now (WAL past the hard
  // limit). Call between transactions.
  bool WriterMustCheckpoint() const;

 private:
  static int WalHook(void* self, sqlite3* db, const char* schema, int pages);
  void Loop();

  sqlite3* db_;  // checkpoint thread only
  const int soft_pages_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int wal_pages_ = 0;      // guarded by mu_ (written by the writer thread)
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace apollo::store::sqlite
