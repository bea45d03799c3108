#include "agent/wal/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace apollo::wal {

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = other.Release();
  }
  return *this;
}

Status ErrnoStatus(int err, const std::string& what) {
  std::string msg = what + ": " + std::strerror(err);
  switch (err) {
    case EACCES:
    case EPERM:
      return Status(StatusCode::kPermissionDenied, msg);
    case ENOENT:
      return Status::NotFound(msg);
    case ENOSPC:
    case EDQUOT:
      return Status::ResourceExhausted(msg);
    default:
      return Status::Unavailable(msg);
  }
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir.back() == '/') {
    return dir + name;
  }
  return dir + "/" + name;
}

Status CreateDirs(const std::string& dir) {
  if (dir.empty()) {
    return Status::InvalidArgument("empty directory path");
  }
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') {
      continue;
    }
    std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, "mkdir " + prefix);
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    return ErrnoStatus(errno, "stat " + dir);
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::FailedPrecondition(dir + " is not a directory");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> ListDir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return ErrnoStatus(errno, "opendir " + dir);
  }
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") {
      names.push_back(std::move(name));
    }
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) {
    return ErrnoStatus(err, "readdir " + dir);
  }
  return names;
}

Result<std::string> ReadFile(const std::string& path, uint64_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "open " + path);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return ErrnoStatus(errno, "fstat " + path);
  }
  uint64_t want = std::min<uint64_t>(static_cast<uint64_t>(st.st_size), limit);
  std::string data(want, '\0');
  uint64_t got = 0;
  while (got < want) {
    ssize_t n = ::pread(fd.get(), data.data() + got, want - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return ErrnoStatus(errno, "read " + path);
    }
    if (n == 0) {
      break;  // shrank underneath us
    }
    got += static_cast<uint64_t>(n);
  }
  data.resize(got);
  return data;
}

Result<UniqueFd> CreateNewFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "create " + path);
  }
  return fd;
}

Status PwriteAll(int fd, const char* data, size_t n, uint64_t offset, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) {
      continue;
    }
    if (w < 0) {
      return ErrnoStatus(errno, "write " + path);
    }
    data += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return Status::Ok();
}

Status WriteZeros(int fd, uint64_t from, uint64_t to, const std::string& path) {
  static const std::string kZeros(64 << 10, '\0');
  while (from < to) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kZeros.size(), to - from));
    APOLLO_RETURN_IF_ERROR(PwriteAll(fd, kZeros.data(), n, from, path));
    from += n;
  }
  return Status::Ok();
}

Status TruncateFd(int fd, uint64_t size, const std::string& path) {
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    return ErrnoStatus(errno, "truncate " + path);
  }
  return Status::Ok();
}

Status DataSync(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0) {
    return ErrnoStatus(errno, "fdatasync " + path);
  }
  return Status::Ok();
}

Status SyncDir(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "open " + dir);
  }
  if (::fsync(fd.get()) != 0) {
    return ErrnoStatus(errno, "fsync " + dir);
  }
  return Status::Ok();
}

Status TruncateFile(const std::string& path, uint64_t size) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "open " + path);
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    return ErrnoStatus(errno, "ftruncate " + path);
  }
  return DataSync(fd.get(), path);
}

Result<UniqueFd> LockFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "open " + path);
  }
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return Status::FailedPrecondition(path + " is locked: WAL in use");
    }
    return ErrnoStatus(errno, "flock " + path);
  }
  return fd;
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    return ErrnoStatus(errno, "unlink " + path);
  }
  return Status::Ok();
}

Status RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoStatus(errno, "rename " + from + " -> " + to);
  }
  return Status::Ok();
}

}  // namespace apollo::wal
