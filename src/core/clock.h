#pragma once

// Time, injected. Logic never calls a bare now(): it asks the Clock it was
// given, so tests drive timeouts and backoff with a ManualClock and never
// sleep.
//
// Thread-safety: every Clock here is safe to call from any thread.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace apollo {

// Wall-clock instants with microsecond resolution (the store keeps them as
// integer microseconds since the Unix epoch).
using TimePoint = std::chrono::time_point<std::chrono::system_clock, std::chrono::microseconds>;
using Duration = std::chrono::microseconds;

inline int64_t ToUnixMicros(TimePoint t) { return t.time_since_epoch().count(); }
inline TimePoint FromUnixMicros(int64_t us) { return TimePoint(Duration(us)); }
inline int64_t ToUnixSeconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

// The system's wall clock. The only place in the code base that reads it.
class RealClock final : public Clock {
 public:
  TimePoint Now() const override {
    return std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now());
  }
};

// A clock that moves only when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = FromUnixMicros(1'700'000'000'000'000))
      : now_us_(ToUnixMicros(start)) {}

  TimePoint Now() const override { return FromUnixMicros(now_us_.load()); }
  void Advance(Duration d) { now_us_.fetch_add(d.count()); }
  void Set(TimePoint t) { now_us_.store(ToUnixMicros(t)); }

 private:
  std::atomic<int64_t> now_us_;
};

}  // namespace apollo
