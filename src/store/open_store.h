#pragma once

// The one way to obtain a StateStore: by URL.
//
//   sqlite:///abs/path/apollo.db   absolute path
//   sqlite://./rel/path/apollo.db  relative to the working directory
//   postgresql://user@host:port/db  (or postgres://...) a PostgreSQL database
//
// The Clock must outlive the store.

#include <memory>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"
#include "store/state_store.h"

namespace apollo::store {

struct StoreOptions {
  // SQLite: "FULL" (default: every commit survives power loss) or "NORMAL"
  // (survives a process crash; the last commits may be lost on power loss).
  std::string sqlite_synchronous = "FULL";
  // Group commit: most events (or requests) in one transaction.
  int batch_cap = 1000;
  // Read connections kept open for queries.
  int reader_connections = 4;
  // PostgreSQL: write connections, each with its own writer thread; the
  // first `event_writers` apply the agents' events (a node's always on the
  // same one), the others everything else (creates, dispatch, timeouts,
  // ...), concurrently. With one writer it does everything; with more,
  // event_writers is at most writers - 1. SQLite always has one writer.
  int writers = 3;
  int event_writers = 2;
  // SQLite: checkpoint the WAL on a background thread (true) or inside the
  // committing thread, SQLite's default (false).
  bool background_checkpoint = true;
  // SQLite page cache per connection, in KiB.
  int cache_kib = 16 * 1024;
};

Result<std::unique_ptr<StateStore>> OpenStateStore(std::string_view url,
                                                   const StoreOptions& options,
                                                   const Clock& clock);

}  // namespace apollo::store
