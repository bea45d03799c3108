// The operator API's store backup (issue 22): an admin call that copies the
// live SQLite store with SQLite's online backup API into a temporary file
// beside it (the state directory, the one place the service may write) and
// streams that file to the caller, then deletes it. Ingest and dispatch go
// on meanwhile. A PostgreSQL store is refused with how to use pg_dump: the
// database's own tools do it better and do not pass through this process.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "orchestrator/api_service.h"
#include "store/sqlite/backup.h"

namespace apollo::orchestrator {
namespace {

constexpr size_t kChunkBytes = 1 << 20;

// A directory of its own beside the store (mkdtemp), removed with what it
// holds when it goes out of scope.
struct TempDir {
  std::string path;  // empty: not made
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

// The copy of the store at `store_url`, streamed to `writer`.
grpc::Status StreamBackup(const std::string& store_url,
                          grpc::ServerWriter<apollo::v1::BackupChunk>* writer) {
  Result<std::string> db = store::SqliteUrlPath(store_url);
  if (!db.ok()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "the store is not SQLite: back up PostgreSQL with its own tools, e.g. "
                        "pg_dump -Fc -f apollo.dump DBNAME (restore: pg_restore --clean -d "
                        "DBNAME apollo.dump); see docs/operations.md#backup-and-restore");
  }
  std::string pattern = *db + ".backup-XXXXXX";
  TempDir tmp;
  if (::mkdtemp(pattern.data()) == nullptr) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        "cannot make a directory for the backup beside " + *db);
  }
  tmp.path = pattern;
  const std::string copy = tmp.path + "/apollo.db";
  Result<int> version = store::BackupSqlite(*db, copy);
  if (!version.ok()) return ToGrpc(version.status());
  std::error_code ec;
  const uint64_t total = std::filesystem::file_size(copy, ec);
  std::ifstream in(copy, std::ios::binary);
  if (ec || !in) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "cannot read the backup copy " + copy);
  }
  apollo::v1::BackupChunk chunk;
  chunk.set_total_bytes(total);
  chunk.set_schema_version(*version);
  std::string buf(kChunkBytes, '\0');
  uint64_t sent = 0;
  bool first = true;
  while (first || sent < total) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0 && !first) break;
    chunk.set_data(buf.data(), n);
    if (!writer->Write(chunk)) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "the caller went away during the backup");
    }
    sent += n;
    first = false;
    chunk.Clear();
  }
  if (sent != total) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "the backup copy changed while being sent");
  }
  return grpc::Status::OK;
}

}  // namespace

// An admin call, in the audit trail: a backup holds everything the store does.
grpc::Status ApiService::BackupStore(grpc::ServerContext* ctx,
                                     const apollo::v1::BackupStoreRequest* req,
                                     grpc::ServerWriter<apollo::v1::BackupChunk>* writer) {
  return Audited(*ctx, Role::kAdmin, "store.backup", "", *req,
                 [&] { return StreamBackup(store_url_, writer); });
}

}  // namespace apollo::orchestrator
