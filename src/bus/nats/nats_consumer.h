#pragma once

// One partition's durable pull consumer: fetch -> BatchApplier -> ack / nak
// with delay -> tell the SettleTracker. Runs its own thread.
//
// A message carries several events (one publish call's events of this
// partition). The messages of one fetch go to the store in as few applies as
// batch_max events allow (a message is never split), in order; the applier
// decides per event. A message is acked once every one of
// its events is committed or dead-lettered, and nak'd (redelivered with a
// growing delay) while any is still to be retried; its committed events come
// back as duplicates, which the store recognises. So a poison event holds
// only its own message, is parked alone after max_deliver deliveries (the
// applier then applies the others one by one), and the partition keeps
// flowing.
//
// Thread-safety: Start/Stop from one thread; Stats() from any.

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bus/applier.h"
#include "bus/event_bus.h"
#include "bus/nats/nats_util.h"
#include "bus/settle_tracker.h"

namespace apollo::bus::nats {

struct ConsumerStats {
  uint64_t applied = 0;  // events committed or dead-lettered by this consumer
  uint64_t dead = 0;
  // Of `applied`, events inside messages not yet acked (a neighbour is being
  // retried): the server still counts them as pending.
  uint64_t applied_unacked = 0;
};

class PartitionConsumer {
 public:
  // `conn`, `store`, `book`, `tracker` must outlive the consumer.
  PartitionConsumer(int partition, const BusOptions& options, natsConnection* conn,
                    store::StateStore& store, DeadLetterBook& book, TaskDirectory& tasks,
                    SettleTracker& tracker);
  ~PartitionConsumer() { Stop(); }

  void Start();
  void Stop();
  ConsumerStats Stats() const;
  std::string durable() const { return durable_; }
  std::string subject() const { return subject_; }

 private:
  void Run();
  Status Subscribe();
  // False when the server says the durable consumer is gone (its stream was
  // deleted); a Fetch on a deleted consumer only times out.
  bool ConsumerExists();
  void WaitForOrphans();
  void Handle(const std::vector<natsMsg*>& fetched);  // owned by the caller

  const int partition_;
  const BusOptions& options_;
  natsConnection* conn_;
  store::StateStore& store_;
  DeadLetterBook& book_;
  SettleTracker& tracker_;
  BatchApplier applier_;  // consumer thread only
  const std::string durable_;
  const std::string subject_;
  JsPtr js_;    // consumer thread only
  SubPtr sub_;  // consumer thread only
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  ConsumerStats stats_;  // guarded by mu_ (applied_unacked: see partial_)
  // Nak'd messages by stream sequence: which of their events are already
  // counted in stats_.applied (so a redelivery does not count them twice).
  std::map<uint64_t, std::vector<bool>> partial_;  // guarded by mu_
};

}  // namespace apollo::bus::nats
