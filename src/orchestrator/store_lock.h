#pragma once

// One orchestrator per SQLite store: an exclusive lock (flock) on a file
// beside the database, held for the life of the process and released by
// the kernel however it ends (kill -9 too). A second orchestrator on the
// same file is refused with who holds it, instead of two dispatchers
// sharing one store (several orchestrators need PostgreSQL: a lease with
// fencing, docs/replicas.md).
//
// Thread-safety: a value; one owner.

#include <string>

#include "core/status.h"

namespace apollo::orchestrator {

class StoreLock {
 public:
  // Takes the lock of the SQLite database `db_path` (the file
  // <db_path>.orchestrator.lock), writing `holder` (who we are) into it.
  // kFailedPrecondition naming the holder when another process has it;
  // kUnavailable when the lock file cannot be made.
  static Result<StoreLock> Take(const std::string& db_path, const std::string& holder);

  StoreLock(StoreLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  StoreLock& operator=(StoreLock&&) = delete;
  StoreLock(const StoreLock&) = delete;
  ~StoreLock();

 private:
  explicit StoreLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace apollo::orchestrator
