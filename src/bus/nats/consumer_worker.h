#pragma once

// The consumer side of the NATS bus for a set of partitions: one fetch
// thread per partition (PartitionConsumer::Poll, a long-poll) and one apply
// thread that takes whatever the fetchers have handed over, from all its
// partitions, and applies it in one BatchApplier::Apply (store ops of at most
// batch_max events per owned partition; a message is never split; each
// partition's messages in fetch order). Each partition then acks / naks its
// own messages and the SettleTracker hears of the commits.
//
// Why: the store's throughput follows events per transaction (BENCHMARKS.md).
// Independent per-partition loops each applying their own fetch put ~200
// events in a transaction; fetching from each partition in turn from one
// thread costs a round trip per partition per op. Here the fetches run in
// parallel, and while the store commits one op the fetchers already collect
// the next (one hand-over per partition at a time), so each op carries
// everything that arrived meanwhile.
//
// Order: a partition's hand-overs are applied in fetch order, one op after
// the other. A message that must be retried is nak'd with a delay and comes
// back after later messages of its partition, exactly as with one loop per
// partition.
//
// Thread-safety: Start/Join from one thread.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "bus/applier.h"
#include "bus/event_bus.h"
#include "bus/nats/nats_consumer.h"
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
  struct Fetched {
    PartitionConsumer* part;
    natsMsgList list;
  };
  void FetchLoop(size_t i);
  void ApplyLoop();
  void Apply(std::vector<Fetched>& fetched);
  void ApplyOp(std::vector<Delivery>& batch,
               std::vector<std::pair<PartitionConsumer*, std::vector<HeldMsg>>>& held);

  const std::vector<PartitionConsumer*> parts_;
  const BusOptions& options_;
  SettleTracker& tracker_;
  BatchApplier applier_;  // apply thread only
  const std::atomic<bool>& stop_;
  std::mutex mu_;
  std::condition_variable cv_;
  // Per partition: a fetch handed over and not yet taken by the apply thread.
  std::vector<bool> ready_;              // guarded by mu_
  std::vector<natsMsgList> handed_;      // guarded by mu_
  std::vector<std::thread> fetchers_;
  std::thread applier_thread_;
};

}  // namespace apollo::bus::nats
