#pragma once

// The consumer side shared by every backend: applies one partition batch to
// the StateStore and decides, per event, committed / retry / dead letter.
//
//  - Before the store sees an event, it is checked: ValidateEvent, and that
//    its (task, node) exists (a per-partition cache of known tasks, filled by
//    StateStore::GetTask). A poison event never reaches the store, so its
//    sequence number stays open (see event_bus.h) and a replay can apply it.
//  - The healthy events go to the store in one ApplyAsync (the store's group
//    commit merges partitions). A failed commit makes every event a retry;
//    once an event reached max_deliver the batch is tried whole once more,
//    and if that fails (not for an outage) applied one event at a time so
//    only the culprit is parked.
//  - A store that cannot be reached (kUnavailable: down, restarting, in
//    recovery) is not the event's fault: its events are retried for as long
//    as the outage lasts and never parked for it (chaos seed 234913738, a
//    PostgreSQL restart, parked a valid SUCCEEDED after 5 deliveries in
//    0.75 s). Only the other errors count toward max_deliver.
//  - Parking (DeadLetterBook) adds the letter once per event_id: an agent
//    that resends a parked event after a reconnect does not park it twice.
//
// Thread-safety: DeadLetterBook and TaskDirectory are thread-safe. A
// BatchApplier keeps no state of its own, so one thread may Begin an op while
// another Finishes an earlier one.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bus/event_bus.h"
#include "bus/settle_tracker.h"
#include "core/event.h"
#include "store/state_store.h"

namespace apollo::bus {

// The store keeps a letter's event as JSON and validates it on the way back,
// so a malformed event (bad JSON payload, unknown type, seq 0, ...) cannot be
// parked as is. Such an event is parked as a valid carrier whose payload is
// {"apollo_malformed": {the original fields}}; FromLetterEvent restores the
// original exactly. Valid events are parked unchanged. (Store follow-up:
// keep letters raw and skip validation when reading them.)
Event ToLetterEvent(const Event& e);
Event FromLetterEvent(const Event& e);

class DeadLetterBook {
 public:
  DeadLetterBook(store::StateStore& store, AlertSink sink) : store_(store), sink_(std::move(sink)) {}
  // Loads the event ids already parked (a restart).
  Status Load();
  // Parks the event unless already parked. OK when it is parked.
  Status Park(const Event& e, const std::string& reason, int deliveries);
  void Forget(const std::string& event_id);
  uint64_t parked() const;

 private:
  store::StateStore& store_;
  AlertSink sink_;
  mutable std::mutex mu_;
  std::set<std::string> parked_ids_;  // guarded by mu_
  uint64_t parked_count_ = 0;         // guarded by mu_: parked by this process
};

// Which (task, node) rows exist, for the poison check. Shared by the
// partitions. On a miss it loads the node's newest rows in one query
// (ListNodeTasks, at most once a second per node), then asks for the one
// task (GetTask). Rows never disappear, so a positive answer is cached.
// Thread-safe (one mutex; store reads happen outside it).
class TaskDirectory {
 public:
  explicit TaskDirectory(store::StateStore& store) : store_(store) {}
  // True if the row exists; store errors as errors.
  Result<bool> Exists(const std::string& task_id, const std::string& node_id);
  // Rows the caller has just seen committed (the submit path), so their
  // events need no store read here.
  void AddRows(const std::vector<std::pair<std::string, std::string>>& task_node);

 private:
  bool Known(const std::string& key);
  void Add(std::vector<std::string> keys);
  store::StateStore& store_;
  std::mutex mu_;
  std::unordered_set<std::string> known_;                         // guarded by mu_
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> loaded_;  // mu_
};

// The poison check every consumer runs before the store sees an event:
// ValidateEvent and that its (task, node) exists. Empty: fine. Otherwise why
// the event is poison. A store error (the lookup failed) is an error: retry.
// Shared by BatchApplier and the embedded bus's direct path.
Result<std::string> CheckEvent(TaskDirectory& tasks, const Event& e);

struct Delivery {
  Event event;
  int deliveries = 1;  // this delivery's number, 1-based
};

enum class Disposition { kCommitted, kRetry, kDeadLettered };

struct Settled {
  Disposition disposition = Disposition::kRetry;
  uint64_t acked_seq = 0;  // kCommitted: node's high-water mark after commit
  store::Outcome outcome = store::Outcome::kApplied;  // kCommitted: the store's
  std::string reason;      // kRetry / kDeadLettered: why
  // kRetry: the store could not be reached (kUnavailable), which says
  // nothing of the event. Such a retry never counts toward max_deliver.
  bool transient = false;
};

// How many times redeliver_delay is doubled before delivery `deliveries`+1
// of a retried event: once per delivery, up to 1024x. A store outage's
// retries stop at 32x, so events flow again soon after the store is back.
inline int RetryShift(int deliveries, bool transient) {
  return std::min(deliveries - 1, transient ? 5 : 10);
}

// An Apply in flight: the poison check's verdicts and the store op of the
// healthy events, not yet waited for.
struct PendingApply {
  std::vector<Settled> out;     // one per delivery; final except `healthy`
  std::vector<size_t> healthy;  // deliveries in `op`
  std::future<Result<store::ApplyResult>> op;  // invalid: nothing submitted
};

// Tells the publishers' tracker what one store op's deliveries came to
// (settled[i] is the verdict on event_of(i)): the committed in one
// CommittedAll (see there why not one by one), the parked as dead letters,
// retries not at all. Every consumer reports through this.
template <class EventOf>
void ReportSettled(SettleTracker& tracker, const std::vector<Settled>& settled,
                   EventOf event_of) {
  std::vector<SettleTracker::Commit> commits;
  for (size_t i = 0; i < settled.size(); ++i) {
    const Event& e = event_of(i);
    if (settled[i].disposition == Disposition::kCommitted) {
      commits.push_back({e.node_id, e.sequence_number, settled[i].acked_seq, settled[i].outcome});
    } else if (settled[i].disposition == Disposition::kDeadLettered) {
      tracker.DeadLettered(e.node_id, e.sequence_number);
    }
  }
  tracker.CommittedAll(commits);
}

class BatchApplier {
 public:
  BatchApplier(store::StateStore& store, DeadLetterBook& book, TaskDirectory& tasks,
               int max_deliver)
      : store_(store), book_(book), tasks_(tasks), max_deliver_(max_deliver) {}

  // One Settled per delivery, same order.
  std::vector<Settled> Apply(const std::vector<Delivery>& batch) {
    return Finish(batch, Begin(batch));
  }

  // Apply in two halves, so a consumer can submit its next op while the
  // store commits this one (the store's writer commits ops in submission
  // order and merges queued ones). Begin checks the events and submits the
  // healthy ones without waiting, except at max_deliver, where it waits (for
  // the whole batch, then one event at a time if that failed other than for
  // an outage). Finish waits for the op; pass the same batch.
  PendingApply Begin(const std::vector<Delivery>& batch);
  std::vector<Settled> Finish(const std::vector<Delivery>& batch, PendingApply p);

 private:
  // A retry below max_deliver, else the event parked.
  Settled Poison(const Delivery& d, const std::string& reason);
  // A store error: a transient retry when the store is unreachable, else
  // Poison.
  Settled StoreError(const Delivery& d, const Status& s);
  // One store op of deliveries `idx`, in that order.
  std::future<Result<store::ApplyResult>> Submit(const std::vector<Delivery>& batch,
                                                 const std::vector<size_t>& idx);
  void ApplyHealthy(const std::vector<Delivery>& batch, const std::vector<size_t>& idx,
                    std::vector<Settled>& out);
  // Settles deliveries `idx` (the events of one store op, in order) by `r`.
  void SettleOp(const std::vector<Delivery>& batch, const std::vector<size_t>& idx,
                const Result<store::ApplyResult>& r, std::vector<Settled>& out);
  void ApplyOneByOne(const std::vector<Delivery>& batch, const std::vector<size_t>& idx,
                     std::vector<Settled>& out);

  store::StateStore& store_;
  DeadLetterBook& book_;
  TaskDirectory& tasks_;
  const int max_deliver_;
};

}  // namespace apollo::bus
