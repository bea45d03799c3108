#pragma once

// Leases and fencing: how several orchestrators share one store safely
// (docs/replicas.md).
//
// A lease is a row: who holds it, until when, and an epoch that grows by one
// each time a replica acquires it (never on renewal). The holder writes the
// work the lease gives it (dispatch, timeouts, retries, repairs) inside a
// FenceScope: every write op enqueued by that thread while the scope lives
// carries the Fence, and the store checks it against the lease row in the
// op's own transaction, under a share lock that a taker's UPDATE must wait
// for. So a deposed holder's write fails in the store (kFailedPrecondition,
// "fenced ..."), however late it arrives; its own idea of being the leader
// is never trusted.
//
// Thread-safety: FenceScope and CurrentFence are per thread; the rest are
// plain values.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace apollo::store {

// The one lease the orchestrators compete for today.
inline constexpr char kLeaderLease[] = "leader";

// How the store refuses a write whose fence no longer holds: the message
// of its kFailedPrecondition starts with this.
inline constexpr std::string_view kFencedPrefix = "fenced: ";
// A write refused by its fence (nothing of it was written).
inline bool IsFenced(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition && s.message().starts_with(kFencedPrefix);
}

// What a fenced write must still hold when it commits.
struct Fence {
  std::string lease;
  std::string holder;
  int64_t epoch = 0;
};

// While alive, write ops enqueued by this thread carry `fence` (nullptr:
// none, e.g. to write unfenced inside a fenced scope). Scopes nest.
class FenceScope {
 public:
  explicit FenceScope(const Fence* fence);
  ~FenceScope();
  FenceScope(const FenceScope&) = delete;
  FenceScope& operator=(const FenceScope&) = delete;

 private:
  const Fence* previous_;
};

// The fence of this thread's innermost FenceScope, or nullptr.
const Fence* CurrentFence();

// A replica's claim: renew the lease it holds (epoch = the held one) or
// take it if it is free or expired (any other epoch, 0 for "none").
struct LeaseClaim {
  std::string lease = kLeaderLease;
  std::string replica_id;
  std::string address;  // where agents and operators reach this replica
  Duration ttl = std::chrono::seconds(5);
  int64_t epoch = 0;
  TimePoint started_at{};  // the replica's start, shown by cluster status
};

// A lease as the store has it after a claim (the holder may be another
// replica: the claim then changed nothing but the claimant's "seen").
struct LeaseRow {
  std::string lease;
  std::string holder;
  std::string address;
  int64_t epoch = 0;
  TimePoint acquired_at{};
  TimePoint renewed_at{};
  TimePoint expires_at{};
};

// A replica as last seen by the store (each claim refreshes it).
struct ReplicaRow {
  std::string replica_id;
  std::string address;
  TimePoint started_at{};
  TimePoint seen_at{};
};

struct ClusterView {
  std::vector<LeaseRow> leases;
  std::vector<ReplicaRow> replicas;
};

}  // namespace apollo::store
