#pragma once

// The center's watch over live agent streams: a stream from which nothing
// has been heard (no message of any kind) for `limit` is ended
// (SilentPeer::SilenceTimedOut), so an agent cut off by a silent link
// (packets dropped, no FIN, no RST) shows as disconnected after about two
// heartbeat intervals instead of for as long as TCP keeps trying.
//
// It replaces the center's own HTTP/2 keepalive pings, which cost a timer,
// a write and a read per agent per heartbeat interval even on a healthy
// link (a third of an idle fleet's CPU, BENCHMARKS.md). The agent's
// heartbeats already say "alive": listening to them costs nothing extra.
//
// A peer registers once its Hello is accepted (Add) if its agent follows
// the heartbeat interval the center names (Hello.follows_heartbeat_pace; an
// older agent beats at its own, unknown here) and leaves when it ends
// (Remove). It keeps its own "last heard" time, cheap to update on every
// message; a peer the center itself is not reading (back-pressure: its
// batches are still committing) reports none and is never counted silent.
// Expire(now) ends every peer silent past the limit; the thread started by
// Start() calls it eight times per the shortest limit of any watched peer
// (tick()): a fleet told to beat every 50 s is swept every ~16 s, not every
// second (each sweep reads every peer's clock). Times are the steady clock's: a
// step of the wall clock must not make every agent look silent at once.
//
// Lifetime: a peer must Remove itself before it is destroyed; once Remove
// returned, it is never called again.
// Thread-safety: thread-safe. LastHeard and SilenceTimedOut are called with
// this object's lock held: they must not call back into it.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/clock.h"

namespace apollo::orchestrator {

// How long a session may be silent: 2.5 of the heartbeat intervals its agent
// was told, so two missed heartbeats end it and one late one does not.
inline Duration SilenceLimitFor(Duration heartbeat) { return heartbeat * 5 / 2; }

class SilentPeer {
 public:
  // When something was last heard from the peer; nullopt while the center
  // is not reading it (it cannot be heard then, so it is not silent).
  virtual std::optional<std::chrono::steady_clock::time_point> LastHeard() const = 0;
  // Nothing heard for `silent`: end the stream.
  virtual void SilenceTimedOut(Duration silent) = 0;

 protected:
  ~SilentPeer() = default;
};

class SilenceWatch {
 public:
  // `limit`: the shortest silence any peer is allowed (it sets how often
  // the watch sweeps); 0 turns the watch off (Add does nothing). `log` (may
  // be empty) hears one line per sweep that ended streams.
  explicit SilenceWatch(Duration limit, std::function<void(const std::string&)> log = {});
  ~SilenceWatch();
  SilenceWatch(const SilenceWatch&) = delete;
  SilenceWatch& operator=(const SilenceWatch&) = delete;

  void Start();
  void Stop();

  // Watches `peer`, ended once silent for longer than max(limit(), `own`):
  // a peer told to heartbeat less often (heartbeat_pace.h) may be quiet
  // for longer.
  void Add(SilentPeer* peer, Duration own = Duration{0});
  // A watched peer may now be quiet for `own` (if longer than its limit).
  // No-op if not watched (never watched, or already ended or removed).
  void Extend(SilentPeer* peer, Duration own);
  // It ended. No-op if not registered.
  void Remove(SilentPeer* peer);
  // Ends (and forgets) every peer silent for longer than the limit at `now`;
  // how many.
  int Expire(std::chrono::steady_clock::time_point now);

  size_t watched() const;
  int64_t expired_total() const;
  Duration limit() const { return limit_; }
  // How long the thread waits between sweeps: an eighth of the shortest
  // limit of the peers watched at the last Expire or added since, within
  // [50 ms, 30 s]. A silent stream lives at most its limit plus this.
  Duration tick() const;

 private:
  void Loop();

  const Duration limit_;
  const std::function<void(const std::string&)> log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<SilentPeer*, Duration> peers_;  // guarded by mu_; -> its limit
  // The shortest limit in peers_ (limit_ while empty), or shorter: it is
  // recomputed by Expire, lowered by Add. Guarded by mu_.
  Duration shortest_;
  int64_t expired_ = 0;                    // guarded by mu_
  bool stop_ = false;                      // guarded by mu_
  std::thread thread_;
};

}  // namespace apollo::orchestrator
