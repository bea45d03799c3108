#include "store/sqlite/backup.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "store/engine/schema.h"

namespace apollo::store {
namespace {

namespace fs = std::filesystem;

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Db = std::unique_ptr<sqlite3, CloseDb>;

Result<Db> Open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    return Status::InvalidArgument(
        path + ": cannot open: " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(raw, 10'000);
  return db;
}

// The text of the first column of the first row of `sql`; "" when no row.
Result<std::string> One(sqlite3* db, const std::string& path, const char* sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
    return Status::InvalidArgument(path + ": " + sqlite3_errmsg(db));
  }
  std::string out;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    return Status::InvalidArgument(path + ": " + sqlite3_errmsg(db));
  }
  return out;
}

Status SyncPath(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Status::Internal(path + ": open: " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Status::Internal(path + ": fsync: " + std::strerror(err));
  return Status::Ok();
}

}  // namespace

Result<std::string> SqliteUrlPath(std::string_view url) {
  constexpr std::string_view kPrefix = "sqlite://";
  if (!url.starts_with(kPrefix) || url.size() == kPrefix.size()) {
    return Status::InvalidArgument("not a sqlite://PATH store URL: " + std::string(url));
  }
  return std::string(url.substr(kPrefix.size()));
}

Result<int> CheckSqliteStore(const std::string& path) {
  if (!fs::is_regular_file(path)) return Status::InvalidArgument(path + ": no such file");
  Result<Db> opened = Open(path, SQLITE_OPEN_READONLY);
  if (!opened.ok()) return opened.status();
  sqlite3* db = opened->get();
  Result<std::string> check = One(db, path, "PRAGMA quick_check");
  if (!check.ok()) {
    return Status::InvalidArgument(check.status().message() + " (not a SQLite database?)");
  }
  if (*check != "ok") return Status::InvalidArgument(path + ": damaged: " + *check);
  Result<std::string> has =
      One(db, path,
          "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
  if (!has.ok()) return has.status();
  if (*has != "1") {
    return Status::InvalidArgument(path + ": not an Apollo-11 store (no schema_version)");
  }
  Result<std::string> v = One(db, path, "SELECT max(version) FROM schema_version");
  if (!v.ok()) return v.status();
  const int version = v->empty() ? 0 : std::atoi(v->c_str());
  if (version < 1) return Status::InvalidArgument(path + ": not an Apollo-11 store (no version)");
  if (version > engine::kSchemaVersion) {
    return Status::FailedPrecondition(path + ": store schema " + std::to_string(version) +
                                      " is newer than this build reads (" +
                                      std::to_string(engine::kSchemaVersion) + ")");
  }
  return version;
}

Result<int> BackupSqlite(const std::string& db_path, const std::string& out_path) {
  if (fs::exists(out_path)) return Status::AlreadyExists(out_path + " already exists");
  Result<Db> src_open = Open(db_path, SQLITE_OPEN_READWRITE);
  if (!src_open.ok()) return src_open.status();
  Db src = std::move(*src_open);
  Result<Db> dst_open = Open(out_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!dst_open.ok()) return dst_open.status();
  Db dst = std::move(*dst_open);
  sqlite3_backup* b = sqlite3_backup_init(dst.get(), "main", src.get(), "main");
  if (b == nullptr) {
    std::string why = sqlite3_errmsg(dst.get());
    dst.reset();
    fs::remove(out_path);
    return Status::Internal("backup of " + db_path + ": " + why);
  }
  // One step (-1): every page under one read transaction, so the copy is a
  // single point in time; BUSY/LOCKED (a checkpoint holds a lock) retried.
  int rc = SQLITE_OK;
  for (int i = 0; i < 100; ++i) {
    rc = sqlite3_backup_step(b, -1);
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) break;
    sqlite3_sleep(50);
  }
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    std::string why = sqlite3_errstr(rc);
    dst.reset();
    fs::remove(out_path);
    return Status::Unavailable("backup of " + db_path + ": " + why);
  }
  // The copy keeps the source's WAL journal mode: make it one file.
  if (Result<std::string> mode = One(dst.get(), out_path, "PRAGMA journal_mode=DELETE");
      !mode.ok()) {
    dst.reset();
    fs::remove(out_path);
    return mode.status();
  }
  dst.reset();
  src.reset();
  APOLLO_RETURN_IF_ERROR(SyncPath(out_path, O_RDONLY));
  return CheckSqliteStore(out_path);
}

Status RestoreSqlite(const std::string& from, const std::string& db_path, bool force) {
  if (Result<int> version = CheckSqliteStore(from); !version.ok()) return version.status();
  if (fs::exists(db_path) && !force) {
    return Status::AlreadyExists(db_path + " already exists (a store); --force replaces it");
  }
  const std::string tmp = db_path + ".restore.tmp";
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::copy_file(from, tmp, ec);
  if (ec) return Status::Internal("copy " + from + " to " + tmp + ": " + ec.message());
  if (Status s = SyncPath(tmp, O_RDONLY); !s.ok()) {
    fs::remove(tmp, ec);
    return s;
  }
  // The old store's WAL would be replayed into the new file: remove it.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) fs::remove(db_path + suffix, ec);
  fs::rename(tmp, db_path, ec);
  if (ec) {
    fs::remove(tmp);
    return Status::Internal("rename " + tmp + " to " + db_path + ": " + ec.message());
  }
  fs::path dir = fs::path(db_path).parent_path();
  return SyncPath(dir.empty() ? "." : dir.string(), O_RDONLY | O_DIRECTORY);
}

}  // namespace apollo::store
