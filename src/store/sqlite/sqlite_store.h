#pragma once

// The embedded SQLite backend of StateStore: one file in WAL mode, one writer
// thread with group commit (writer.h), readers on their own connections
// (reader_pool.h). Durability: synchronous=FULL by default, so an OK from a
// write call means the commit reached the disk.
//
// Only one SqliteStore may have a database file open at a time (the writer's
// in-memory high-water marks assume it is the only writer).

#include <memory>
#include <string>

#include "core/clock.h"
#include "store/open_store.h"
#include "store/state_store.h"

namespace apollo::store::sqlite {

Result<std::unique_ptr<StateStore>> OpenSqliteStore(const std::string& path,
                                                    const StoreOptions& options,
                                                    const Clock& clock);

}  // namespace apollo::store::sqlite
