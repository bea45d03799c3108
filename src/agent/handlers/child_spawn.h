#pragma once

// Internal to the child runner: fork/exec of one child in its own process
// group, and the owned file descriptors that come back. Use RunChild
// (child_process.h) instead of calling this directly.
//
// Thread-safety: SpawnChild may run on many threads at once. Every fd it
// creates is O_CLOEXEC and the child closes all fds but its own three, so a
// concurrent spawn never leaks a pipe end into a sibling (which would keep
// that sibling's pipes from reaching EOF).

#include <sys/types.h>

#include <string>
#include <utility>

#include "agent/handlers/child_process.h"
#include "core/status.h"

namespace apollo::agent {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset();

 private:
  int fd_ = -1;
};

struct SpawnedChild {
  pid_t pid = -1;     // == its process group id
  UniqueFd pidfd;     // readable when the child exits; may be invalid (old kernel)
  UniqueFd stdin_w;   // non-blocking
  UniqueFd stdout_r;  // non-blocking
  UniqueFd stderr_r;  // non-blocking
};

// Starts the child. On error nothing is left running. Errors as RunChild.
Result<SpawnedChild> SpawnChild(const ChildSpec& spec);

// Finds `name` like execvp would: as given if it contains '/', else in the
// ':'-separated `path_env`. NotFound / PermissionDenied otherwise.
Result<std::string> ResolveExecutable(const std::string& name, const std::string& path_env);

}  // namespace apollo::agent
