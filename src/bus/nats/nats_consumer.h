#pragma once

// One partition's durable pull consumer: its subscription, its fetches, and
// the ack / nak (with delay) of what it fetched once the store has decided.
// Its fetches run on a ConsumerWorker's fetch thread for this partition; the
// worker's apply thread Collects what several partitions fetched into one
// store op, and its completion thread Settles them (consumer_worker.h).
//
// A message carries several events (one send round's events of this
// partition). The applier decides per event. A message is acked once every
// one of its events is committed or dead-lettered, and nak'd (redelivered
// with a growing delay) while any is still to be retried; its committed
// events come back as duplicates, which the store recognises. So a poison
// event holds only its own message, is parked alone after max_deliver
// deliveries (the applier then applies the others one by one), and the
// partition keeps flowing.
//
// Thread-safety: Poll from the partition's fetch thread; Collect from the
// worker's apply thread; Settle from its completion thread (under mu_; acks
// and naks are thread-safe in cnats); Reset once all have ended; Stats() from
// any.

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bus/applier.h"
#include "bus/event_bus.h"
#include "bus/nats/nats_util.h"

namespace apollo::bus::nats {

struct ConsumerStats {
  uint64_t applied = 0;  // events committed or dead-lettered by this consumer
  uint64_t dead = 0;
  // Of `applied`, events inside messages not yet acked (a neighbour is being
  // retried): the server still counts them as pending.
  uint64_t applied_unacked = 0;
};

// A fetched message and its JetStream metadata, read once on the fetch
// thread (ReadFetched).
struct FetchedMsg {
  natsMsg* msg = nullptr;
  uint64_t stream_seq = 0;  // 0: no metadata
  int delivered = 1;
};
FetchedMsg ReadFetched(natsMsg* m);

// A fetched message whose events went into a store batch.
struct HeldMsg {
  natsMsg* msg;
  size_t first;  // index of its first event in the batch
  size_t count;
  uint64_t stream_seq;
  int delivered;
};

class PartitionConsumer {
 public:
  enum class Polled { kMessages, kEmpty, kNotReady, kError };

  // `conn` and `stop` must outlive the consumer.
  PartitionConsumer(int partition, const BusOptions& options, natsConnection* conn,
                    const std::atomic<bool>& stop);

  // Fetches up to batch_max messages into `list` (the caller destroys it).
  // Returns at once with what is waiting; otherwise waits up to wait_ms for
  // the first message.
  Polled Poll(int64_t wait_ms, natsMsgList* list);
  // Decodes `m` and appends its events to `batch` and one HeldMsg to `held`
  // (a message that is not ours is terminated here).
  void Collect(const FetchedMsg& m, std::vector<Delivery>& batch, std::vector<HeldMsg>& held);
  // Acks / naks each held message by its events' dispositions (`settled` is
  // indexed like the batch) and counts them.
  void Settle(const std::vector<HeldMsg>& held, const std::vector<Settled>& settled);
  // Drops the subscription (and JetStream context). Owning thread only.
  void Reset();

  ConsumerStats Stats() const;
  int partition() const { return partition_; }
  std::string durable() const { return durable_; }
  std::string subject() const { return subject_; }

 private:
  Status Subscribe();
  // False when the server says the durable consumer is gone (its stream was
  // deleted); a Fetch on a deleted consumer only times out.
  bool ConsumerExists();
  // When the durable has orphaned deliveries, the time before which this
  // partition must not fetch (see Subscribe).
  void HoldForOrphans();

  const int partition_;
  const BusOptions& options_;
  natsConnection* conn_;
  const std::atomic<bool>& stop_;
  const std::string durable_;
  const std::string subject_;
  JsPtr js_;    // fetch thread only
  SubPtr sub_;  // fetch thread only
  std::chrono::steady_clock::time_point fetch_after_{};  // fetch thread only
  int errors_ = 0;                                       // fetch thread only
  int idle_ = 0;                                         // fetch thread only
  mutable std::mutex mu_;
  ConsumerStats stats_;  // guarded by mu_ (applied_unacked: see partial_)
  // Nak'd messages by stream sequence: which of their events are already
  // counted in stats_.applied (so a redelivery does not count them twice).
  std::map<uint64_t, std::vector<bool>> partial_;  // guarded by mu_
};

}  // namespace apollo::bus::nats
