#pragma once

// Leadership: whether this replica leads the center, and with which fence
// (store/lease.h, docs/replicas.md). Owns this process's view of the leader
// lease, the thread that claims and renews it, and nothing else: the
// dispatcher, the gateway and the singleton loops ask it, and the store —
// not this object — has the last word (every write the leader makes for the
// work it owns is fenced by its epoch).
//
// Two modes:
//  - single (SQLite): one orchestrator per store (a file lock keeps a second
//    out, store_lock.h); it leads from the start, without a lease or fence.
//  - replicated (PostgreSQL): the lease is claimed at Start and every
//    ttl / 3; a follower takes it once it expired. A leader that finds it
//    lost (a renewal that came too late: the process was paused, or cut off
//    from the store) is deposed: on_deposed runs once (main restarts the
//    process, which comes back as a follower with nothing stale in memory).
//    A leader whose renewals keep failing (store unreachable) deposes itself
//    when its lease has run out by its own clock, before anyone can take it
//    and while its writes are refused anyway.
//
// Thread-safety: every method is thread-safe; the callbacks run on the
// lease thread.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/clock.h"
#include "store/lease.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

struct LeadershipOptions {
  bool single = false;  // SQLite: lead at once, no lease
  Duration ttl = std::chrono::seconds(5);
  std::function<void(const std::string&)> log;
  // Became the leader (lease thread): start the leader's work.
  std::function<void(int64_t epoch)> on_elected;
  // Lost the lease after holding it; `why` says how.
  std::function<void(const std::string& why)> on_deposed;
};

class Leadership {
 public:
  // `store` and `clock` must outlive this object.
  Leadership(LeadershipOptions options, store::StateStore& store, const Clock& clock);
  ~Leadership();

  // `replica_id` names this replica, `address` is where agents reach it
  // (known once the server listens). Single: leads now (on_elected runs
  // before Start returns). Replicated: the first claim runs before Start
  // returns, then the lease thread. Until Start, this replica follows.
  void Start(std::string replica_id, std::string address);
  // Stops the lease thread and lets a held lease go (a follower takes over
  // at once instead of after the ttl).
  void Stop();

  bool leader() const { return leader_.load(); }
  // The fence the leader's writes carry; nullopt for a follower and in
  // single mode (nothing to fence against).
  std::optional<store::Fence> fence() const;
  // The leader as this replica last read it ("" when none is known), for
  // sending agents there.
  std::string leader_address() const;
  std::string leader_id() const;
  std::string replica_id() const;

  const LeadershipOptions& options() const { return options_; }

 private:
  void Loop();
  // One claim; returns false once deposed (the loop then ends).
  bool ClaimOnce();
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }

  const LeadershipOptions options_;
  store::StateStore& store_;
  const Clock& clock_;
  const TimePoint started_;

  std::atomic<bool> leader_{false};
  mutable std::mutex mu_;
  std::string replica_id_;      // guarded by mu_; set by Start
  std::string address_;         // guarded by mu_; set by Start
  int64_t epoch_ = 0;           // guarded by mu_: held epoch (0: none)
  TimePoint held_until_{};      // guarded by mu_: by this replica's clock
  std::string leader_id_;       // guarded by mu_
  std::string leader_address_;  // guarded by mu_
  std::string last_error_;      // guarded by mu_: logged once per change
  bool stop_ = false;           // guarded by mu_
  std::condition_variable cv_;
  std::thread thread_;
};

// While alive, this thread's store writes carry the leader's fence (none
// for a follower, in single mode, or with no Leadership at all).
class LeaderScope {
 public:
  explicit LeaderScope(const Leadership* leadership)
      : fence_(leadership ? leadership->fence() : std::nullopt),
        scope_(fence_ ? &*fence_ : nullptr) {}

 private:
  const std::optional<store::Fence> fence_;
  store::FenceScope scope_;
};

}  // namespace apollo::orchestrator
