#pragma once

// The PostgreSQL schema and its migration on open.
//
// kSchemaSql is the text of <repo>/schema.sql, byte for byte (a test checks
// it): one source of truth that both `psql -f schema.sql` and the store run.
// It is idempotent (IF NOT EXISTS) and takes an advisory lock, so several
// orchestrators may open the same database at once.

#include <string_view>

#include "core/status.h"
#include "store/postgres/pg_conn.h"

namespace apollo::store::postgres {

inline constexpr int kSchemaVersion = 1;

extern const std::string_view kSchemaSql;

// Creates or upgrades the schema to kSchemaVersion. FailedPrecondition when
// the database was migrated by a newer binary; kUnavailable when unreachable.
Status Migrate(PgConn& conn);

}  // namespace apollo::store::postgres
