#pragma once

// Thin POSIX helpers for the WAL, returning Status instead of errno. Every
// error message names the path and the failing call.
//
// Errors: kPermissionDenied for EACCES/EPERM, kNotFound for ENOENT,
// kResourceExhausted for ENOSPC/EDQUOT, kUnavailable for other I/O errors.
//
// Thread-safety: free functions; safe from any thread (they share no state).

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace apollo::wal {

// A file descriptor owned by value; closed on destruction. Not thread-safe
// (a value: one owner at a time).
class UniqueFd final {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

Status ErrnoStatus(int err, const std::string& what);

std::string JoinPath(const std::string& dir, const std::string& name);

// Creates `dir` (and missing parents). OK if it already exists.
Status CreateDirs(const std::string& dir);

// Names of the regular entries of `dir`.
Result<std::vector<std::string>> ListDir(const std::string& dir);

// The whole file, or its first `limit` bytes.
Result<std::string> ReadFile(const std::string& path, uint64_t limit = UINT64_MAX);

// Creates a new file for writing (O_EXCL: it must not exist). Not
// O_APPEND: a segment is written at explicit offsets (PwriteAll), since it
// holds preallocated zeros past the log's end.
Result<UniqueFd> CreateNewFile(const std::string& path);

// pwrite(2) of all of `data` at `offset`.
Status PwriteAll(int fd, const char* data, size_t n, uint64_t offset, const std::string& path);

// Writes zero bytes over [from, to) (really written, not fallocate'd: an
// unwritten extent would still need a metadata update at its first write).
Status WriteZeros(int fd, uint64_t from, uint64_t to, const std::string& path);

// ftruncate(2), without a sync.
Status TruncateFd(int fd, uint64_t size, const std::string& path);

Status DataSync(int fd, const std::string& path);

// fsync of a directory, making created/removed/renamed entries durable.
Status SyncDir(const std::string& dir);

// Truncates `path` to `size` and fdatasyncs it.
Status TruncateFile(const std::string& path, uint64_t size);

// Opens (creating) `path` and takes an exclusive, non-blocking flock on it.
// FailedPrecondition if another open file description holds it.
Result<UniqueFd> LockFile(const std::string& path);

Status RemoveFile(const std::string& path);
Status RenameFile(const std::string& from, const std::string& to);

}  // namespace apollo::wal
