#pragma once

// Overload protection for the dispatcher (seed sections 2.4, 4.3, 4.4):
//  - CircuitBreakers: N consecutive failures of an intent open its breaker:
//    dispatch of that intent pauses; after a cool-down one task is let
//    through (half-open); its success closes the breaker, its failure
//    reopens it.
//  - TokenBucket: re-dispatches (retries, ack-timeout resends) at most R per
//    second with bursts of B, so a failure storm cannot crowd out first
//    dispatches.
//  - Watermarks: the dispatch queue above `alert_at` of its capacity raises
//    an alert; above `pause_at` new submissions are refused (retryable)
//    until it is back below `alert_at`. Going back below `alert_at` is
//    reported too (resumed after a pause, cleared after an alert alone).
//
// Time is passed in, never read: tests drive it with a ManualClock.
// Thread-safety: every class here is thread-safe.

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/clock.h"

namespace apollo::orchestrator {

enum class BreakerState { kClosed, kOpen, kHalfOpen };
std::string_view BreakerStateName(BreakerState s);

struct BreakerInfo {
  std::string intent;
  BreakerState state = BreakerState::kClosed;
  int consecutive_failures = 0;
  TimePoint opened_at{};
  int64_t times_opened = 0;
};

// One breaker per intent name, and intent names come from task files: at
// most `max_entries` are kept. At the bound, closed breakers are forgotten
// (healthy ones first); an open or half-open one never is. An intent that
// finds no room is simply not tracked (always allowed) until there is.
class CircuitBreakers {
 public:
  static constexpr size_t kDefaultMaxEntries = 10'000;
  CircuitBreakers(int failures_to_open, Duration cool_down, size_t max_entries = kDefaultMaxEntries)
      : failures_to_open_(failures_to_open), cool_down_(cool_down), max_entries_(max_entries) {}

  // May a task of `intent` be dispatched now? In half-open state exactly one
  // caller gets true until that task's outcome is recorded.
  bool Allow(const std::string& intent, TimePoint now);
  // Closed (or not tracked): dispatch is allowed with nothing to decide (no
  // cool-down elapsed, no probe to hand out). Changes nothing.
  bool Closed(const std::string& intent) const;
  // Records a final outcome. Returns true when this call opened the breaker
  // (the caller raises the alert).
  bool Record(const std::string& intent, bool success, TimePoint now);
  std::vector<BreakerInfo> List() const;
  size_t size() const;

 private:
  struct Entry {
    BreakerInfo info;
    bool probe_out = false;  // half-open: the one trial task is in flight
  };
  // Makes room for one more entry (mu_ held); false if every entry is open.
  bool MakeRoom();
  const int failures_to_open_;
  const Duration cool_down_;
  const size_t max_entries_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;  // guarded by mu_
};

class TokenBucket {
 public:
  TokenBucket(double rate_per_s, double burst) : rate_(rate_per_s), burst_(burst), tokens_(burst) {}
  // Takes one token if at least `keep` would be left (a reserve for more
  // urgent callers).
  bool Take(TimePoint now, double keep = 0);
  double burst() const { return burst_; }
  // Tokens left at `now` (refilled up to then, nothing taken): for metrics.
  double tokens(TimePoint now) const;
  int64_t taken() const;
  int64_t refused() const;

 private:
  const double rate_;
  const double burst_;
  mutable std::mutex mu_;
  double tokens_;            // guarded by mu_
  TimePoint last_{};         // guarded by mu_
  int64_t taken_ = 0;        // guarded by mu_
  int64_t refused_ = 0;      // guarded by mu_
};

class Watermarks {
 public:
  Watermarks(int64_t capacity, double alert_at, double pause_at)
      : capacity_(capacity), alert_at_(alert_at), pause_at_(pause_at) {}

  // kCleared: back below the alert mark after an alert without a pause
  // (after a pause that is kResumed).
  enum class Change { kNone, kAlert, kPaused, kResumed, kCleared };
  // Updates with the current queue depth; says what changed.
  Change Update(int64_t depth);
  bool paused() const;
  // Above the alert mark (or paused) as of the last Update.
  bool alerting() const;
  int64_t depth() const;
  int64_t capacity() const { return capacity_; }

 private:
  const int64_t capacity_;
  const double alert_at_;
  const double pause_at_;
  mutable std::mutex mu_;
  int64_t depth_ = 0;     // guarded by mu_
  bool alerting_ = false; // guarded by mu_
  bool paused_ = false;   // guarded by mu_
};

}  // namespace apollo::orchestrator
