#pragma once

// SettleTracker: the publishers' side of "acknowledge only after commit".
// Publish registers a waiter for its events; consumers report each event as
// committed (with the node's high-water mark) or dead-lettered; the waiter's
// future completes when all of its events are settled, when it times out
// (kDeadlineExceeded) or when the bus stops (kUnavailable).
//
// Thread-safety: thread-safe (one mutex). Futures are completed outside it.

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "bus/event_bus.h"
#include "core/clock.h"

namespace apollo::bus {

class SettleTracker {
 public:
  explicit SettleTracker(const Clock& clock) : clock_(clock) {}

  // Registers a waiter for `seqs` of `node`. An empty batch completes at once.
  std::future<Result<PublishAck>> Register(const std::string& node,
                                           const std::vector<uint64_t>& seqs,
                                           Duration timeout);
  // One event of `node` was committed (`acked_seq`: the node's high-water
  // mark after that commit) or parked as a dead letter.
  void Committed(const std::string& node, uint64_t seq, uint64_t acked_seq,
                 store::Outcome outcome = store::Outcome::kApplied);
  // The events of one store op: each settles with its own outcome first, and
  // only then is everything at or below each node's mark swept (as
  // duplicates). Reporting them one by one through Committed would let the
  // first event's sweep settle its later neighbours as kDuplicate and lose
  // their real outcome (the orchestrator's breaker counts applied FAILEDs).
  struct Commit {
    std::string node;
    uint64_t seq = 0;
    uint64_t acked_seq = 0;
    store::Outcome outcome = store::Outcome::kApplied;
  };
  void CommittedAll(const std::vector<Commit>& commits);
  void DeadLettered(const std::string& node, uint64_t seq);
  // The bus put event `seq` of `node` into a store op whose report
  // (CommittedAll / DeadLettered) will name it. Until that report no mark's
  // sweep settles it: its op may commit in the same store transaction as an
  // op holding a HIGHER seq of the node that reports first (an agent queues
  // two tasks' events out of seq order; partitions report independently),
  // and sweeping it as a duplicate would lose its real outcome.
  void Carry(const std::string& node, uint64_t seq);
  // The op carrying `seq` ended without reporting it (to be retried in an
  // op that Carries it again).
  void Uncarry(const std::string& node, uint64_t seq);
  // Every waited-for event of `node` with seq <= hwm is committed (the store
  // says so): used for republished events the bus did not deliver again.
  void CommittedUpTo(const std::string& node, uint64_t hwm);
  // Settles waited-for events of `node` that this tracker saw settled above
  // the node's high-water mark (parked, or committed above a gap): JetStream
  // drops a republished copy as a duplicate and will not deliver it again.
  void SettleRemembered(const std::string& node, uint64_t hwm);
  // Completes waiters past their deadline with kDeadlineExceeded.
  void Expire();
  // Completes every waiter with `status` (the bus stopped).
  void FailAll(const Status& status);
  size_t waiting() const;

 private:
  struct Waiter {
    std::promise<Result<PublishAck>> promise;
    PublishAck ack;
    std::multimap<uint64_t, size_t> index;  // seq -> position in the batch
    size_t remaining = 0;
    TimePoint deadline{};
    bool done = false;
    // Its entry in by_deadline_ while not done (erased as it finishes).
    std::multimap<TimePoint, std::shared_ptr<Waiter>>::iterator by_deadline;
  };
  using WaiterPtr = std::shared_ptr<Waiter>;
  void SettleLocked(const std::string& node, uint64_t seq, bool committed, uint64_t acked,
                    std::optional<store::Outcome> outcome, std::vector<WaiterPtr>& finished);
  void SettleUpToLocked(const std::string& node, uint64_t hwm, std::vector<WaiterPtr>& finished);
  static void Finish(std::vector<WaiterPtr>& finished);

  const Clock& clock_;
  mutable std::mutex mu_;
  // node -> seq -> waiters for it. guarded by mu_
  std::map<std::string, std::multimap<uint64_t, WaiterPtr>> by_node_;
  // The waiters not done yet, by deadline: each leaves as it finishes, so
  // this is what waiting() counts (a consumer asks every round). Guarded by mu_.
  std::multimap<TimePoint, WaiterPtr> by_deadline_;
  // node -> seq settled above the node's mark -> committed? guarded by mu_.
  // Small: only events around a gap (a parked event) land here.
  std::map<std::string, std::map<uint64_t, bool>> remembered_;
  void Remember(const std::string& node, uint64_t seq, bool committed);
  // node -> seqs in store ops not yet reported (Carry). guarded by mu_
  std::map<std::string, std::multiset<uint64_t>> carried_;
  void UncarryLocked(const std::string& node, uint64_t seq);
};

}  // namespace apollo::bus
