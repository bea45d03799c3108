#pragma once

// The SQLite driver of the store engine (src/store/engine/sql.h): one file
// in WAL mode. What it adds to the engine, and nothing else:
//  - connections: the writer (synchronous=FULL by default, BEGIN IMMEDIATE,
//    WAL checkpoints on a background thread, checkpointer.h) and readers
//    (query_only; WAL lets them read the last commit while a write is open);
//  - the dialect: `$n` becomes `?n`; a statement over @rows runs once per
//    row with u.<column> bound (in process, a call costs no round trip);
//  - sequences: SQL `nextval('name')` counts in the `sequences` table, read
//    once per write transaction under its lock (so even two processes on
//    one file never hand out one id twice) and written back at COMMIT;
//  - errors: BUSY/LOCKED/IOERR/FULL/CANTOPEN -> kUnavailable,
//    CORRUPT/NOTADB -> kDataLoss, CONSTRAINT -> kAlreadyExists, the rest
//    kInternal.
//
// Thread-safety: the driver may be called from any thread; each connection
// by one thread at a time.

#include <memory>
#include <string>

#include "store/engine/sql.h"
#include "store/open_store.h"

namespace apollo::store::sqlite {

// Opens (creating it if missing) the database file at `path`; kInvalidArgument
// for a bad option, kUnavailable if the file cannot be opened.
Result<std::unique_ptr<sql::Driver>> OpenSqliteDriver(const std::string& path,
                                                      const StoreOptions& options);

}  // namespace apollo::store::sqlite
