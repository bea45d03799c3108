#pragma once

// The PostgreSQL driver of the store engine (src/store/engine/sql.h), on
// libpq. What it adds to the engine, and nothing else:
//  - connections: libpq in pipeline mode (pg_conn.h), a connect timeout and
//    TCP timeouts unless the URL sets them (a dead server fails a call in
//    seconds); a broken connection reports !healthy() and is dropped by its
//    owner, the next call connects again;
//  - the dialect: @rows is unnest() over one array parameter per column (a
//    statement over N rows is one execution); writes run READ COMMITTED,
//    reads REPEATABLE READ READ ONLY; `FOR UPDATE` blocks (/*@pg ...*/) lock
//    what the engine decides on, so several stores may share a database;
//  - text: invalid UTF-8 and NUL become U+FFFD (PostgreSQL's text type
//    refuses them; SQLite keeps the bytes);
//  - errors: unreachable / class 08 / 57P -> kUnavailable (during COMMIT:
//    "outcome unknown"), serialization failure, deadlock and unique
//    violation -> kAborted (run the transaction again), others kInternal.
//
// Thread-safety: the driver may be called from any thread; each connection
// by one thread at a time.

#include <memory>
#include <string>

#include "store/engine/sql.h"

namespace apollo::store::postgres {

// A driver for the database at `url` (postgresql://...). Connects lazily.
std::unique_ptr<sql::Driver> NewPostgresDriver(const std::string& url);

}  // namespace apollo::store::postgres
