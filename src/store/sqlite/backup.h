#pragma once

// Backup and restore of a SQLite store file (issue 22; docs/operations.md).
//
// BackupSqlite copies a live store with SQLite's online backup API through
// a connection of its own: the copy is the database as of one read
// transaction, taken in one step; in WAL mode writers go on meanwhile (only
// checkpoints wait for it). Safe beside a running orchestrator, in or out of
// its process.
//
// RestoreSqlite puts a backup in place of a store that no process has open
// (the orchestrator must be stopped: nothing here can tell). It first checks
// the file is a store this build opens (CheckSqliteStore), then replaces the
// target atomically (copy to a temporary name, fsync, drop the old store's
// -wal/-shm, rename, fsync the directory). On any error nothing is changed.
//
// Thread-safety: free functions; each opens its own connections.

#include <string>
#include <string_view>

#include "core/status.h"

namespace apollo::store {

// "sqlite:///abs" -> "/abs", "sqlite://./rel" -> "./rel"; kInvalidArgument
// for any other URL (postgresql:// included).
Result<std::string> SqliteUrlPath(std::string_view url);

// Copies the database at `db_path` into `out_path`, which must not exist.
// Returns the schema version of the copy.
Result<int> BackupSqlite(const std::string& db_path, const std::string& out_path);

// The schema version of the store file at `path`, after SQLite's
// quick_check; kInvalidArgument when it is not an Apollo-11 store or is
// damaged, kFailedPrecondition when it is newer than this build reads.
Result<int> CheckSqliteStore(const std::string& path);

// Replaces the store at `db_path` by the backup `from`; an existing store is
// replaced only with `force` (kAlreadyExists otherwise).
Status RestoreSqlite(const std::string& from, const std::string& db_path, bool force);

}  // namespace apollo::store
