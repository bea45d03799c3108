#include "cli/store_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "store/sqlite/backup.h"

namespace apollo::cli {
namespace {

namespace fs = std::filesystem;

int Failed(std::ostream& err, const std::string& why) {
  err << "apollo-cli: " << why << "\n";
  return 1;
}

// The file being written: removed unless Keep() was called.
class PartFile {
 public:
  explicit PartFile(std::string path) : path_(std::move(path)) {}
  ~PartFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!kept_) ::unlink(path_.c_str());
  }
  Status Open() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ < 0) return Status::Unavailable("cannot create " + path_ + ": " + std::strerror(errno));
    return Status::Ok();
  }
  Status Write(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::Unavailable("write " + path_ + ": " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  // fsync, rename to `final_path` (which must not exist), fsync the directory.
  Status Finish(const std::string& final_path) {
    if (::fsync(fd_) != 0)
      return Status::Unavailable("fsync " + path_ + ": " + std::strerror(errno));
    ::close(fd_);
    fd_ = -1;
    if (::link(path_.c_str(), final_path.c_str()) != 0) {  // never replaces a file
      return Status::AlreadyExists("cannot create " + final_path + ": " + std::strerror(errno));
    }
    ::unlink(path_.c_str());
    kept_ = true;
    fs::path dir = fs::path(final_path).parent_path();
    int d = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0) {
      ::fsync(d);
      ::close(d);
    }
    return Status::Ok();
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool kept_ = false;
};

}  // namespace

int RunStoreBackup(const GlobalOptions& global, const StoreCommandOptions& opts,
                   OrchestratorClient& client, std::ostream& out, std::ostream& err) {
  if (fs::exists(opts.out)) return Failed(err, opts.out + " already exists; choose a new file");
  PartFile part(opts.out + ".part");
  if (Status s = part.Open(); !s.ok()) return Failed(err, s.message());
  uint64_t total = 0, got = 0;
  int schema = 0;
  bool first = true;
  Status s = client.BackupStore([&](const v1::BackupChunk& c) {
    if (first) total = c.total_bytes(), schema = c.schema_version(), first = false;
    got += c.data().size();
    return part.Write(c.data());
  });
  if (!s.ok()) return Failed(err, "store backup: " + s.message());
  if (first || got != total) {
    return Failed(err, "store backup: received " + std::to_string(got) + " of " +
                           std::to_string(total) + " bytes; nothing written");
  }
  if (Status f = part.Finish(opts.out); !f.ok()) return Failed(err, f.message());
  if (global.json()) {
    out << nlohmann::json{{"out", opts.out}, {"bytes", got}, {"schema_version", schema}}.dump()
        << "\n";
  } else {
    out << "backed up the store (schema " << schema << ", " << got << " bytes) to " << opts.out
        << "\n";
  }
  return 0;
}

int RunStoreRestore(const GlobalOptions& global, const StoreCommandOptions& opts, std::ostream& out,
                    std::ostream& err) {
  Result<std::string> path = store::SqliteUrlPath(opts.store_url);
  if (!path.ok()) {
    return Failed(err, "--store: " + path.status().message() +
                           " (PostgreSQL: restore a pg_dump with pg_restore)");
  }
  Result<int> schema = store::CheckSqliteStore(opts.from);
  if (!schema.ok()) return Failed(err, "--from: " + schema.status().message());
  if (Status s = store::RestoreSqlite(opts.from, *path, opts.force); !s.ok()) {
    return Failed(err, s.message());
  }
  if (global.json()) {
    out << nlohmann::json{{"store", *path}, {"from", opts.from}, {"schema_version", *schema}}.dump()
        << "\n";
  } else {
    out << "restored " << opts.from << " (schema " << *schema << ") into " << *path
        << "; start the orchestrator on it\n";
  }
  return 0;
}

}  // namespace apollo::cli
