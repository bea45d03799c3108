#pragma once

// The PostgreSQL backend of StateStore (postgresql://... URLs): one writer
// thread with group commit (writer.h), readers on their own connections
// (reader_pool.h), the schema migrated on open (schema.h).
//
// Unlike SQLite, several PostgresStore objects, in one process or many, may
// share a database: every write locks what it changes and compare-and-sets
// row versions, so no update is lost (see writer.h).
//
// Durability: an OK from a write call means PostgreSQL committed it (with the
// server's synchronous_commit, on by default).
//
// Unreachable server: Open fails with kUnavailable; afterwards each call
// fails with kUnavailable while the server is away and succeeds again once it
// is back, on the same object (connections are re-made lazily).

#include <memory>
#include <string>

#include "core/clock.h"
#include "store/open_store.h"
#include "store/state_store.h"

namespace apollo::store::postgres {

Result<std::unique_ptr<StateStore>> OpenPostgresStore(const std::string& url,
                                                      const StoreOptions& options,
                                                      const Clock& clock);

}  // namespace apollo::store::postgres
