#pragma once

// The store's schema: one definition for both dialects, versioned.
//
// The tables are written once (schema.cc) in SQL both databases take, with
// three words rendered per dialect — @id (an identity primary key), @pk (an
// integer primary key), @clustered (SQLite's WITHOUT ROWID: the table is its
// primary-key index) — and /*@sqlite ...*/ / /*@pg ...*/ blocks for what
// exists on one side only (sequences). <repo>/schema.sql is the PostgreSQL
// rendering (SchemaFile), checked by a test and made by `make schema`.
//
// Opening a store migrates it (Migrate): a new database gets the tables, an
// older one the steps from its version, each version in schema_version.
// Migrations are frozen once released: a step written per dialect only where
// the two differ.

#include <string>
#include <string_view>

#include "core/status.h"
#include "store/engine/sql.h"

namespace apollo::store::engine {

inline constexpr int kSchemaVersion = 6;

// Brings the database to kSchemaVersion in one transaction (PostgreSQL:
// under an advisory lock, so stores starting together take turns).
// kFailedPrecondition for a database newer than this binary.
Status Migrate(sql::Conn& conn, std::string_view dialect);

// The tables (and the version row) for `dialect`, the words rendered and
// the other dialect's blocks removed.
std::string RenderSchema(std::string_view dialect);

// <repo>/schema.sql: the PostgreSQL schema as psql runs it.
std::string SchemaFile();

}  // namespace apollo::store::engine
