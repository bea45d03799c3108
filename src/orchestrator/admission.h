#pragma once

// Admission control for new agent sessions: a center that restarts under a
// large fleet must not be knocked over by the reconnect storm, and should
// still take the fleet back as fast as it can actually serve it.
//
// A Hello is admitted only when both bounds allow it; otherwise the agent is
// refused with a retry-after and comes back then, plus jitter:
//  - a ceiling on the rate: a token bucket of `max_per_s` with one second of
//    burst (config admission.max_new_sessions_per_s);
//  - a window of handshakes in flight: sessions admitted whose snapshot the
//    center has not acknowledged yet (Hello -> Welcome -> backlog ->
//    snapshot -> SnapshotAck: "reconciled"). The window follows the center's
//    own time on each handshake (handling its Hello and its snapshot,
//    waiting for the store included; not the agent's or the network's, so
//    slow agents do not throttle a center that has room): additive
//    increase, multiplicative decrease. Each handshake the center served
//    within half the `target` while the window was at least half used grows
//    it by one (it doubles per round while the center keeps up easily),
//    within the target by one per round; one that took the center longer
//    shrinks it by a quarter, at most once per `target`. As the store queues
//    up, the center's time grows with the handshakes in flight, so the
//    window settles where the center sustains the pace with its handshakes
//    near `target`, whatever the hardware or the store (issue 18: a fixed
//    100/s took 100 s for 10,000 agents on a center that could do several
//    times that). A handshake not reconciled within `expire` (an agent that
//    never sends its snapshot) gives its slot back.
//
// A refused agent is told when to come back (RetryAfter): a random moment
// within the time the center needs to take every agent waiting, that is
// the distinct nodes refused and not admitted since (forgotten after 2
// minutes), over the pace the center can reconcile handshakes at (the
// fastest it did over 2 s, or what the window allows at the target, the
// higher). The waiting then come back spread at about that pace (the agent
// adds up to a quarter as jitter, agent/session.cc) instead of every second
// in a crowd that is refused again and again; counting nodes, not
// refusals, keeps an agent refused twice from lengthening the wait.
//
// Thread-safety: not thread-safe; the orchestrator calls it under its mutex.
// Time is passed in.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/clock.h"
#include "orchestrator/overload.h"

namespace apollo::orchestrator {

// What admission control did and holds now (for /metrics).
struct AdmissionCounts {
  int64_t admitted = 0;  // Hellos admitted since the start
  int64_t refused = 0;   // Hellos refused since the start
  int window = 0;        // handshakes the window allows now
  size_t in_flight = 0;  // admitted and not yet reconciled
};

struct AdmissionOptions {
  double max_per_s = 2000;  // the rate ceiling (and its burst)
  int initial_window = 64;  // after a (re)start
  int min_window = 8;
  int max_window = 4096;
  Duration target = std::chrono::milliseconds(200);  // center time per handshake aimed at
  Duration expire = std::chrono::seconds(10);        // a handshake this old frees its slot
};

class Admission {
 public:
  explicit Admission(AdmissionOptions options);

  // A ticket for the new session, or nullopt: refused, come back later.
  // `node` is no longer waiting once admitted.
  std::optional<uint64_t> TryAdmit(TimePoint now, const std::string& node = {});
  // The session of `ticket` was reconciled (its first snapshot
  // acknowledged); `center_time`: what the center spent on its Hello and
  // snapshot. Unknown or expired tickets are ignored.
  void Reconciled(uint64_t ticket, Duration center_time, TimePoint now);
  // The session of `ticket` ended, or its Hello failed, before it was
  // reconciled: its slot is free, nothing is learnt.
  void Abandoned(uint64_t ticket);
  // For `node`, refused now: when to come back (250 ms .. 2 min).
  Duration RetryAfter(const std::string& node, TimePoint now);

  int window() const { return static_cast<int>(window_); }
  size_t in_flight() const { return in_flight_.size(); }
  int64_t admitted() const { return admitted_; }
  int64_t refused() const { return refused_; }
  AdmissionCounts counts() const { return {admitted_, refused_, window(), in_flight()}; }

 private:
  void Expire(TimePoint now);
  void Shrink(TimePoint now);

  const AdmissionOptions options_;
  TokenBucket rate_;  // the ceiling: max_per_s, one second of burst
  double window_;
  TimePoint shrunk_at_{};
  // Ticket -> when it was admitted. Tickets grow with time: begin() is the
  // oldest.
  std::map<uint64_t, TimePoint> in_flight_;
  // Reconciled handshakes of the last 2 s, oldest first (the pace).
  std::deque<TimePoint> reconciled_;
  double peak_pace_ = 0;  // the most reconciled per second over 2 s so far
  // Nodes refused and not admitted since -> when last refused; and the
  // same in refusal order, for forgetting (an entry whose time differs
  // from the map's is stale).
  std::unordered_map<std::string, TimePoint> waiting_;
  std::deque<std::pair<TimePoint, std::string>> waiting_order_;
  std::mt19937_64 rng_{0x5eed};
  uint64_t next_ticket_ = 1;
  int64_t admitted_ = 0;
  int64_t refused_ = 0;
};

}  // namespace apollo::orchestrator
