#include "apollo_bench/db_stats.h"

#include <libpq-fe.h>
#include <sqlite3.h>

#include <filesystem>

namespace apollo::bench {
namespace {

// The tables retention must bound (the rest are per node or tiny).
const char* const kTables[] = {"tasks", "task_nodes", "history", "payloads", "seq_above", "alerts"};

Result<DbStats> SqliteStats(const std::string& path) {
  DbStats s;
  std::error_code ec;
  for (const char* suffix : {"", "-wal"}) {
    auto n = std::filesystem::file_size(path + suffix, ec);
    if (!ec) s.bytes += static_cast<int64_t>(n);
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Status::Unavailable("open " + path + ": " + why);
  }
  sqlite3_busy_timeout(db, 5000);
  for (const char* table : kTables) {
    sqlite3_stmt* st = nullptr;
    std::string sql = std::string("SELECT count(*) FROM ") + table;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      s.rows[table] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return s;
}

Result<DbStats> PgStats(const std::string& url) {
  PGconn* c = PQconnectdb(url.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::string why = PQerrorMessage(c);
    PQfinish(c);
    return Status::Unavailable("connect: " + why);
  }
  DbStats s;
  auto scalar = [c](const std::string& sql) -> int64_t {
    PGresult* r = PQexec(c, sql.c_str());
    int64_t v = -1;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
      v = std::stoll(PQgetvalue(r, 0, 0));
    }
    PQclear(r);
    return v;
  };
  s.bytes = scalar("SELECT pg_database_size(current_database())");
  for (const char* table : kTables)
    s.rows[table] = scalar(std::string("SELECT count(*) FROM ") + table);
  PQfinish(c);
  return s;
}

}  // namespace

Result<DbStats> ReadDbStats(const std::string& url) {
  constexpr std::string_view kSqlite = "sqlite://";
  if (url.rfind(kSqlite, 0) == 0) return SqliteStats(url.substr(kSqlite.size()));
  return PgStats(url);
}

}  // namespace apollo::bench
