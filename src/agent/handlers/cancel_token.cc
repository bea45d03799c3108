#include "agent/handlers/cancel_token.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace apollo::agent {

std::string_view StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kNone: return "none";
    case StopReason::kCancelled: return "cancelled";
    case StopReason::kTimeout: return "timeout";
  }
  return "unknown";
}

namespace {

// The counter stays non-zero: nobody reads it, so poll() keeps seeing the fd
// readable for every waiter, now and later.
void Signal(int fd) {
  uint64_t one = 1;
  ssize_t n = write(fd, &one, sizeof(one));
  (void)n;  // EAGAIN only if the counter is already huge: still readable.
}

}  // namespace

CancelToken::CancelToken() = default;

CancelToken::~CancelToken() {
  if (event_fd_ >= 0) close(event_fd_);
}

bool CancelToken::Trip(StopReason reason) {
  if (reason == StopReason::kNone) return false;
  int fd;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (reason_ != StopReason::kNone) return false;
    reason_ = reason;
    fd = event_fd_;  // -1 if not made yet: wait_fd() then signals it itself
  }
  cv_.notify_all();
  if (fd >= 0) Signal(fd);
  return true;
}

int CancelToken::wait_fd() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fd_made_) {
    fd_made_ = true;
    event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    // Tripped before anyone asked: readable from the start.
    if (event_fd_ >= 0 && reason_ != StopReason::kNone) Signal(event_fd_);
  }
  return event_fd_;
}

StopReason CancelToken::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

bool CancelToken::WaitFor(Duration d) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, d, [this] { return reason_ != StopReason::kNone; });
}

StopReason StopCondition::Check() const {
  StopReason reason = token_.reason();
  if (reason != StopReason::kNone) return reason;
  if (deadline_ && clock_.Now() >= *deadline_) {
    token_.Timeout();
    return token_.reason();
  }
  return StopReason::kNone;
}

Duration StopCondition::NextWait(Duration cap) const {
  if (!deadline_) return std::max(cap, Duration(0));
  Duration left = *deadline_ - clock_.Now();
  return std::clamp(left, Duration(0), std::max(cap, Duration(0)));
}

StopReason StopCondition::WaitFor(Duration d) const {
  StopReason reason = Check();
  if (reason != StopReason::kNone) return reason;
  Duration wait = NextWait(d);
  if (wait > Duration(0)) token_.WaitFor(wait);
  return Check();
}

}  // namespace apollo::agent
