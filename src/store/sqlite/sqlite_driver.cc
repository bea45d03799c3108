#include "store/sqlite/sqlite_driver.h"

#include <chrono>

#include "store/sqlite/sqlite_conn.h"

namespace apollo::store::sqlite {
namespace {

// WAL pages that wake the background checkpoint (SQLite's default is 1000).
constexpr int kCheckpointPages = 1000;
constexpr std::chrono::milliseconds kCheckpointInterval{100};

class SqliteDriver final : public sql::Driver {
 public:
  SqliteDriver(std::string path, const StoreOptions& options)
      : path_(std::move(path)), options_(options) {}

  // sql::Driver
  std::string_view dialect() const override { return "sqlite"; }
  Result<std::unique_ptr<sql::Conn>> Connect(sql::Role role) override {
    const bool writer = role == sql::Role::kWriter;
    Result<sqlite3*> db = OpenHandle(path_, /*create=*/writer);
    if (!db.ok()) return db.status();
    auto conn = std::make_unique<SqliteConn>(*db, role);
    std::string pragmas = "PRAGMA cache_size = -" + std::to_string(options_.cache_kib) + ";";
    if (!writer) {
      APOLLO_RETURN_IF_ERROR(conn->Script(pragmas + " PRAGMA query_only = 1"));
      return std::unique_ptr<sql::Conn>(std::move(conn));
    }
    std::unique_ptr<Checkpointer> ckpt;
    if (options_.background_checkpoint) {
      Result<sqlite3*> ckpt_db = OpenHandle(path_, /*create=*/true);
      if (!ckpt_db.ok()) return ckpt_db.status();
      ckpt = std::make_unique<Checkpointer>(*ckpt_db, kCheckpointPages, kCheckpointInterval);
    }
    // WAL mode first: the checkpointer's hook only fires in WAL mode.
    APOLLO_RETURN_IF_ERROR(
        conn->Script(pragmas + " PRAGMA journal_mode = WAL; PRAGMA synchronous = " +
                     options_.sqlite_synchronous + "; PRAGMA temp_store = MEMORY"));
    if (ckpt) conn->AttachCheckpointer(std::move(ckpt));
    return std::unique_ptr<sql::Conn>(std::move(conn));
  }

 private:
  const std::string path_;
  const StoreOptions options_;
};

}  // namespace

Result<std::unique_ptr<sql::Driver>> OpenSqliteDriver(const std::string& path,
                                                      const StoreOptions& options) {
  if (options.sqlite_synchronous != "FULL" && options.sqlite_synchronous != "NORMAL") {
    return Status::InvalidArgument("sqlite_synchronous must be FULL or NORMAL, not " +
                                   options.sqlite_synchronous);
  }
  return std::unique_ptr<sql::Driver>(std::make_unique<SqliteDriver>(path, options));
}

}  // namespace apollo::store::sqlite
