#pragma once

// The consumer side of the NATS bus for a set of partitions: one fetch
// thread per partition (PartitionConsumer::Poll, a long-poll), one apply
// thread that takes what the fetchers have handed over, from all its
// partitions, once the store has room for an op, holding back a send round
// not all of whose messages have arrived (round_cut.h: a publish completes
// with its last event), and submits it as one store op (BatchApplier::Begin; ops of at
// most batch_max events per owned partition; a message is never split; each
// partition's messages in fetch order), and one completion thread that waits
// for the ops (BatchApplier::Finish); each partition then acks / naks its own
// messages and the SettleTracker hears of the commits.
//
// Why: the store's throughput follows events per transaction (BENCHMARKS.md).
// Independent per-partition loops each applying their own fetch put ~200
// events in a transaction; fetching from each partition in turn from one
// thread costs a round trip per partition per op. Here the fetches run in
// parallel (up to kHandOversMax fetches waiting per partition, so a
// fetcher long-polls again at once), and while the store commits one op the
// fetchers already collect the next, so each op carries everything that
// arrived meanwhile.
//
// Pipelined: the apply thread submits an op and goes on to the next without
// waiting for the commit (at most kOpsInFlight ops in flight); a completion
// thread waits for them in submission order and acks / naks. The store's
// single writer commits ops in submission order and merges the queued ones
// into one transaction, so the store is never idle while the bus settles an
// op, and its group commit sizes transactions as it does for callers of the
// store alone (BENCHMARKS.md, "Event bus", 17:00 UTC).
//
// Order: a partition's hand-overs are submitted in fetch order and committed
// in that order. Exceptions: a message that must be retried is nak'd with a
// delay and comes back after later messages of its partition (as with one
// loop per partition); and when an op fails (a store error), ops submitted
// after it may already have committed, so its events are applied after later
// ones of their partition. This is the embedded bus's failed direct op, and
// the no-bus path's failed apply (src/bus/README.md, "Ordering guarantee"):
// nothing is lost or applied twice, and each event is judged against the
// row's state when it lands.
//
// Thread-safety: Start/Join from one thread.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bus/applier.h"
#include "bus/event_bus.h"
#include "bus/nats/nats_consumer.h"
#include "bus/nats/round_cut.h"
#include "bus/settle_tracker.h"

namespace apollo::bus::nats {

class ConsumerWorker {
 public:
  // Everything referenced must outlive the worker; `stop` ends its threads.
  ConsumerWorker(std::vector<PartitionConsumer*> parts, const BusOptions& options,
                 store::StateStore& store, DeadLetterBook& book, TaskDirectory& tasks,
                 SettleTracker& tracker, const std::atomic<bool>& stop);
  ~ConsumerWorker() { Join(); }

  void Start();
  // Returns once the threads have ended (`stop` must be set).
  void Join();

 private:
  // A message a fetcher handed over, not yet taken by the apply thread, and
  // its send round (empty: untagged) for CutAtWholeRounds.
  struct Handed {
    FetchedMsg msg;
    std::string round;
    size_t parts = 1;
    Instant at;
  };
  using Taken = std::vector<std::pair<PartitionConsumer*, std::vector<FetchedMsg>>>;
  using Held = std::vector<std::pair<PartitionConsumer*, std::vector<HeldMsg>>>;
  // A submitted store op and what to settle when it completes.
  struct Op {
    std::vector<Delivery> batch;
    Held held;
    PendingApply pending;
    std::vector<natsMsg*> msgs;  // destroyed once this op is settled
  };
  void FetchLoop(size_t i);
  void ApplyLoop();
  void CompleteLoop();
  // Takes what CutAtWholeRounds allows (mu_ held); empty if nothing yet.
  Taken TakeLocked(std::optional<Instant>* recheck);
  void Apply(Taken& taken);
  // Submits `batch` (emptied) as one op; waits while kOpsInFlight are.
  void Submit(std::vector<Delivery>& batch, Held& held, std::vector<natsMsg*> msgs);
  void Settle(Op& op);

  const std::vector<PartitionConsumer*> parts_;
  const BusOptions& options_;
  const size_t handed_max_;  // per partition: messages waiting to be taken
  SettleTracker& tracker_;
  BatchApplier applier_;  // Begin on the apply thread, Finish on the completion thread
  const std::atomic<bool>& stop_;
  std::mutex mu_;
  std::condition_variable fetch_cv_;  // room in handed_
  std::condition_variable apply_cv_;  // a hand-over, or room for an op
  std::condition_variable op_cv_;     // ops submitted / settled
  std::vector<std::deque<Handed>> handed_;  // guarded by mu_: per partition, in fetch order
  std::deque<Op> submitted_;             // guarded by mu_: not yet taken to settle
  size_t in_flight_ = 0;                 // guarded by mu_: submitted, not yet settled
  bool applying_done_ = false;           // guarded by mu_: the apply thread ended
  // Rounds taken incomplete since expired_since_, and until when rounds are
  // not held at all (see kExpiredMax). Apply thread only.
  size_t expired_ = 0;
  Instant expired_since_{};
  Instant no_hold_until_{};
  std::vector<std::thread> fetchers_;
  std::thread applier_thread_;
  std::thread completer_thread_;
};

}  // namespace apollo::bus::nats
