#pragma once

// HeartbeatBuffer: agents' heartbeats between two store writes. Owns the
// latest heartbeat of each node received since the last flush, and when that
// flush was. A commit per heartbeat was most of an idle fleet's cost, so they
// are written in one transaction at most once per `flush_every`; liveness is
// read from the store and lags by at most that much, and a crash loses at
// most that much liveness information.
//
// Thread-safety: every method is thread-safe.

#include <map>
#include <mutex>
#include <string>

#include "core/clock.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

class HeartbeatBuffer {
 public:
  explicit HeartbeatBuffer(Duration flush_every) : flush_every_(flush_every) {}

  void Record(store::NodeHeartbeat beat);
  // Drops the node's pending heartbeat (its Hello registers it afresh: an
  // older beat must not move it back).
  void Forget(const std::string& node_id);
  // Writes the pending heartbeats in one transaction, unless the last flush
  // was less than flush_every ago (and not `force`). On a store error they
  // are kept for the next flush, unless newer ones came meanwhile.
  void Flush(store::StateStore& store, TimePoint now, bool force);

 private:
  const Duration flush_every_;
  std::mutex mu_;
  std::map<std::string, store::NodeHeartbeat> pending_;  // guarded by mu_
  TimePoint flushed_{};                                  // guarded by mu_
};

}  // namespace apollo::orchestrator
