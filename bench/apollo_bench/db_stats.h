#pragma once

// Size and row counts of a store, read beside the running orchestrator
// (SQLite: a read-only connection, WAL mode lets it read while the center
// writes; PostgreSQL: one libpq connection). For the retention soak.
//
// Thread-safety: a free function; each call opens and closes its own
// connection.

#include <map>
#include <string>

#include "core/status.h"

namespace apollo::bench {

struct DbStats {
  int64_t bytes = 0;                    // SQLite: db + wal files; PG: pg_database_size
  std::map<std::string, int64_t> rows;  // by table
};

// `url`: sqlite://PATH or postgresql://...
Result<DbStats> ReadDbStats(const std::string& url);

}  // namespace apollo::bench
