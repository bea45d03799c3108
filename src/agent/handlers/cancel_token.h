#pragma once

// Cancellation and deadlines for running handlers.
//
// The executor owns one CancelToken per run and trips it with Cancel() (an
// operator's cancel) or Timeout() (its own supervision). Handlers never
// sleep blindly: they wait on a StopCondition, which wakes at once when the
// token trips and also notices a deadline passing on the injected Clock.
//
// Thread-safety: CancelToken is safe to use from any thread; the first stop
// reason wins and later calls do not change it. StopCondition is a cheap view
// (non-owning) and is as thread-safe as the token and clock it refers to.

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string_view>

#include "core/clock.h"

namespace apollo::agent {

// Why a run should stop. kNone means "keep going".
enum class StopReason { kNone, kCancelled, kTimeout };

std::string_view StopReasonName(StopReason reason);

class CancelToken {
 public:
  CancelToken();
  ~CancelToken();
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  // Trips the token. Returns true if this call set the reason (first wins).
  bool Cancel() { return Trip(StopReason::kCancelled); }
  bool Timeout() { return Trip(StopReason::kTimeout); }
  bool Trip(StopReason reason);

  StopReason reason() const;
  bool stopped() const { return reason() != StopReason::kNone; }

  // Blocks up to `d` (real time); returns true as soon as the token trips.
  bool WaitFor(Duration d) const;

  // A file descriptor that becomes readable once the token trips, for poll()
  // loops. Owned by the token; valid for its lifetime. -1 if eventfd failed
  // (callers then fall back to their poll timeout). Made on the first call:
  // only handlers that poll (child processes) ask, and a token per run of
  // every other handler would cost an eventfd and a close per task.
  int wait_fd() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  StopReason reason_ = StopReason::kNone;  // guarded by mu_
  mutable int event_fd_ = -1;              // guarded by mu_
  mutable bool fd_made_ = false;           // guarded by mu_: wait_fd() ran
};

// A token plus an optional deadline measured on an injected clock.
class StopCondition {
 public:
  StopCondition(CancelToken& token, const Clock& clock,
                std::optional<TimePoint> deadline)
      : token_(token), clock_(clock), deadline_(deadline) {}

  // The current stop reason. A passed deadline trips the token with
  // kTimeout, so everyone watching the token sees it too.
  StopReason Check() const;

  // How long to wait before the next Check(): `cap`, or less if the
  // deadline comes sooner; never negative.
  Duration NextWait(Duration cap) const;

  // Waits up to `d` (shortened by the deadline); returns the reason after.
  StopReason WaitFor(Duration d) const;

  CancelToken& token() const { return token_; }
  const Clock& clock() const { return clock_; }

 private:
  CancelToken& token_;
  const Clock& clock_;
  std::optional<TimePoint> deadline_;
};

}  // namespace apollo::agent
