#pragma once

// Text as PostgreSQL takes it: connection strings with bounded waits, UTF-8
// that the server accepts, and array literals for @rows (sql.h).
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>

#include "store/engine/sql.h"

namespace apollo::store::postgres {

// The connection string libpq gets: `url` plus, unless it sets them, a
// connect timeout and TCP timeouts, so a dead or partitioned server fails a
// call in seconds rather than hanging it.
std::string ConnectionString(std::string_view url);

// `text` as PostgreSQL's UTF8 text accepts it: invalid UTF-8 and NUL bytes
// become U+FFFD. Agents and operators can send any bytes (SQLite stores them
// as given); one bad string must not fail a whole batch here.
std::string CleanText(std::string_view text);

// Column `col` of `rows` as an array literal ('{1,NULL,"a\"b"}') for
// unnest($n::<type>[]).
std::string ArrayLiteral(const sql::RowSet& rows, size_t col);

// The array type of a column type, for unnest($n::<this>).
std::string_view ArrayType(sql::Type t);

}  // namespace apollo::store::postgres
