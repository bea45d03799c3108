#pragma once

// The Hello deadline of agent streams: a stream that has not said Hello
// within `timeout` of opening is ended (HelloWaiter::HelloTimedOut), so a
// peer that opens streams and stays silent cannot hold them — nor the
// admission slots they take (gateway_service.h) — for ever.
//
// A stream registers when it opens (Add) and leaves when its Hello arrives
// or it ends (Remove). Expire(now) ends every stream past its deadline; the
// thread started by Start() calls it a few times per timeout, tests call it
// with a ManualClock's time.
//
// Lifetime: a waiter must Remove itself before it is destroyed; once Remove
// returned, it is never called again.
// Thread-safety: thread-safe. HelloTimedOut is called with this object's
// lock held: it must not call back into it.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/clock.h"

namespace apollo::orchestrator {

class HelloWaiter {
 public:
  // The deadline passed without a Hello: end the stream.
  virtual void HelloTimedOut() = 0;

 protected:
  ~HelloWaiter() = default;
};

class HelloDeadlines {
 public:
  // `log` (may be empty) hears one line per sweep that ended streams.
  HelloDeadlines(Duration timeout, const Clock& clock,
                 std::function<void(const std::string&)> log = {});
  ~HelloDeadlines();
  HelloDeadlines(const HelloDeadlines&) = delete;
  HelloDeadlines& operator=(const HelloDeadlines&) = delete;

  void Start();
  void Stop();

  // The stream opened now; it must say Hello by now + timeout.
  void Add(HelloWaiter* waiter);
  // Its Hello arrived, or it ended. No-op if not registered.
  void Remove(HelloWaiter* waiter);
  // Ends (and forgets) every stream past its deadline at `now`; how many.
  int Expire(TimePoint now);

  size_t waiting() const;
  int64_t expired_total() const;
  Duration timeout() const { return timeout_; }

 private:
  void Loop();

  const Duration timeout_;
  const Clock& clock_;
  const std::function<void(const std::string&)> log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<TimePoint, HelloWaiter*> by_deadline_;  // guarded by mu_
  std::unordered_map<HelloWaiter*, std::multimap<TimePoint, HelloWaiter*>::iterator>
      index_;            // guarded by mu_
  int64_t expired_ = 0;  // guarded by mu_
  bool stop_ = false;    // guarded by mu_
  std::thread thread_;
};

}  // namespace apollo::orchestrator
