#pragma once

// The StateStore, written once over a SQL driver (sql.h): writer threads
// with group commit (writer.h; SQLite one, PostgreSQL StoreOptions::writers:
// event_writers for the events, by node, the others for the rest), readers on their own connections
// (reader_pool.h), the schema migrated on open (schema.h). Every rule of the
// store lives in this folder; a driver only connects, speaks its dialect and
// maps its errors.
//
// Several stores, in one process or many, may share a database: every write
// locks what it changes and compare-and-sets row versions (writer.h).
//
// Durability: an OK from a write call means the database committed it
// (SQLite: synchronous=FULL by default; PostgreSQL: the server's
// synchronous_commit, on by default).
//
// Unreachable database: Open fails with kUnavailable; afterwards each call
// fails with kUnavailable while it is away and succeeds again once it is
// back, on the same object (connections are re-made lazily).

#include <memory>

#include "core/clock.h"
#include "store/engine/sql.h"
#include "store/open_store.h"
#include "store/state_store.h"

namespace apollo::store::engine {

// Migrates the database behind `driver`, then starts the writer.
Result<std::unique_ptr<StateStore>> OpenEngineStore(std::unique_ptr<sql::Driver> driver,
                                                    const StoreOptions& options,
                                                    const Clock& clock);

}  // namespace apollo::store::engine
