#include "orchestrator/store_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace apollo::orchestrator {

Result<StoreLock> StoreLock::Take(const std::string& db_path, const std::string& holder) {
  const std::string path = db_path + ".orchestrator.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Unavailable("cannot open the store's lock file " + path + ": " +
                               std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[512] = {};
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) {
      return Status::Unavailable("cannot lock " + path + ": " + std::strerror(err));
    }
    std::string who = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "another process";
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    return Status::FailedPrecondition(
        "the SQLite store " + db_path + " is in use by another orchestrator (" + who +
        "); a SQLite store serves one orchestrator: stop that one, or run several on "
        "PostgreSQL (--store postgresql://...)");
  }
  const std::string line = holder + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, line.data(), line.size(), 0) < 0) {
    // The lock holds regardless; only the name shown to a second one is lost.
  }
  return StoreLock(fd);
}

StoreLock::~StoreLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace apollo::orchestrator
