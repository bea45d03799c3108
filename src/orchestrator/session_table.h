#pragma once

// SessionTable: the agents this center holds a stream with. Owns the
// session of each connected node (a reconnect replaces the older one), the
// latest snapshot of each (dropped with its session: a snapshot says what the
// agent ran while connected, stale once it is gone), and admission control
// of new sessions with the tickets of those still in their handshake
// (admission.h). It writes nothing to the store; the gateway fills it, the
// dispatcher and the reconciler read it.
//
// Thread-safety: every method is thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "orchestrator/admission.h"
#include "orchestrator/agent_session.h"
#include "orchestrator/reconciler.h"

namespace apollo::orchestrator {

class SessionTable {
 public:
  explicit SessionTable(AdmissionOptions admission) : admission_(admission) {}

  // Admission at Hello: false = refused, come back after `*retry_after`
  // (admission.h). An admitted
  // session's handshake ends with EndHandshake (its first snapshot
  // reconciled, or the session gone); `center_time` is what the center spent
  // on it so far (its Hello, then its snapshot).
  bool Admit(const SessionHandle* handle, TimePoint now, Duration* retry_after);
  void AddHandshakeTime(const SessionHandle* handle, Duration center_time);
  void EndHandshake(const SessionHandle* handle, bool reconciled, TimePoint now);

  // The node's session from now on (an older one is replaced).
  void Add(const std::shared_ptr<SessionHandle>& handle);
  // Forgets `handle` and its node's snapshot, unless a newer session of the
  // node replaced it already.
  void Remove(const std::shared_ptr<SessionHandle>& handle);
  // The node's session if connected (ready or still syncing), else null.
  std::shared_ptr<SessionHandle> Connected(const std::string& node_id) const;
  // The node's session if connected and synced (ready for intents).
  std::shared_ptr<SessionHandle> Ready(const std::string& node_id) const;

  void SetSnapshot(NodeSnapshot snapshot);
  std::optional<NodeSnapshot> Snapshot(const std::string& node_id) const;
  std::vector<NodeSnapshot> Snapshots() const;

  size_t sessions() const;
  AdmissionCounts admission() const;
  size_t snapshots() const;
  // Every connected session.
  std::vector<std::shared_ptr<SessionHandle>> All() const;

 private:
  struct Handshake {
    uint64_t ticket = 0;
    Duration center_time{0};
  };

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<SessionHandle>> sessions_;  // guarded by mu_
  std::map<std::string, NodeSnapshot> snapshots_;                   // guarded by mu_
  Admission admission_;                                             // guarded by mu_
  std::unordered_map<const SessionHandle*, Handshake> admitting_;   // guarded by mu_
};

}  // namespace apollo::orchestrator
