#pragma once

// `apollo-cli cluster status`: the orchestrator replicas sharing this store
// (docs/replicas.md), the leader lease (holder, epoch, acquired, renewed,
// expiry) and which replica answered. Every replica reads the same rows from
// the store, so any address answers it. On SQLite (mode "single") there is
// one orchestrator and no lease, and it says so.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "apollo/v1/api.pb.h"
#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

// Returns the exit code; on failure one line "apollo-cli: <reason>" on `err`.
int RunClusterStatus(const GlobalOptions& global, OrchestratorClient& client, std::ostream& out,
                     std::ostream& err);

// Pure views, for tests. Times are the answering replica's (now_ms), so the
// ages do not depend on this machine's clock.

// "leader" when the replica holds the leader lease; "gone" when it has not
// claimed for more than 3 lease lengths (it stopped or lost the store;
// its row stays); else "follower". A lease length of 0 (not known) never
// makes a replica "gone".
std::string ReplicaRole(const v1::ReplicaStatus& replica, int64_t now_ms, int64_t lease_ttl_ms);

// JSON (public shape): {"mode", "answered_by", "answered_by_leader",
// "now", "lease_ttl_ms", "leases": [{"name", "holder", "address", "epoch",
// "acquired_at", "renewed_at", "expires_at", "expired"}], "replicas":
// [{"replica_id", "address", "leader", "role", "started_at", "seen_at"}]};
// times RFC 3339 UTC, null when unset. `leader`: holds the lease (what
// scripts select on); `role`: as ReplicaRole.
nlohmann::json ClusterStatusToJson(const v1::ClusterStatusResponse& resp);

// Replicated:
//   mode replicated, lease ttl 5s; answered by b (follower)
//   leader lease: a at 127.0.0.1:7011, epoch 3, acquired 12:00:01, renewed 0.8s ago, expires
//   in 4.2s REPLICA  ADDRESS         ROLE      STARTED   LAST SEEN a        127.0.0.1:7011  leader
//   12:00:00  0.8s ago c        127.0.0.1:7013  gone      11:59:00  3m ago (not seen for > 3 lease
//   lengths)
// Single: "mode single (SQLite: one orchestrator, no lease); replica ID".
// Clock times are UTC, with the date when not the answering replica's day.
std::string ClusterStatusText(const v1::ClusterStatusResponse& resp);

}  // namespace apollo::cli
