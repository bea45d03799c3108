#pragma once

// EventBus: carries agent events to the StateStore, at least once, in order
// per task, with dead letters for what cannot be applied (issue 7).
//
// Contracts every backend keeps (checked by bus_conformance_test.cc):
//  - Partitioning: an event goes to partition PartitionOf(task_id, n). One
//    consumer per partition applies its events in publish order; partitions
//    run in parallel and share the store's group commit. (Retries and, on the
//    embedded bus, a failed direct op are the exceptions: src/bus/README.md.)
//  - Publish(node, events) completes when every event of the batch is either
//    committed in the store or parked as a dead letter. PublishAck::acked_seq
//    is the node's contiguous high-water mark seen at those commits: what the
//    gateway may acknowledge to the agent. The bus is NEVER the only copy of
//    an event: the agent keeps it in its WAL until acknowledged, so a bus that
//    loses events (embedded: a crash; JetStream: its lazy fsync) loses nothing
//    that was acknowledged.
//  - Dedup: republishing an event (same event_id) is harmless: the store
//    dedups by event_id and the node's mark, JetStream a republished batch
//    by Nats-Msg-Id (one message per publish call and partition), the
//    embedded bus skips an event that is already in flight.
//  - Redelivery: a batch whose store commit failed is delivered again (with a
//    growing delay); a consumer that dies before its commit leaves the events
//    to be redelivered (JetStream) or resent by the agent (embedded).
//  - Dead letters: an event that is malformed, names an unknown (task, node),
//    or fails to commit max_deliver times (a store that cannot be reached
//    does not count: its events wait for it) is parked with StateStore::
//    AddDeadLetter (reason + delivery count), the alert sink is told, and the
//    partition keeps flowing. A parked event is NOT consumed in the store: its
//    sequence number stays open, so the node's acked_seq stops below it until
//    an operator replays it (after fixing the cause) or drops it (the store
//    then records it as malformed/unknown and the gap closes).
//
// Errors: kUnavailable (the bus is stopped or its server unreachable: retry;
// nothing was acknowledged), kDeadlineExceeded (held but not committed within
// commit_timeout: retry; the event may still commit), kInvalidArgument.
//
// Thread-safety: every method may be called from any thread concurrently.

#include <cstdint>
#include <functional>
#include <optional>
#include <future>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/event.h"
#include "core/status.h"
#include "store/types.h"

namespace apollo::bus {

// A dead letter was parked (or could not be): what an operator must see.
struct BusAlert {
  std::string kind;  // "dead_letter"
  std::string event_id;
  std::string task_id;
  std::string node_id;
  std::string reason;
  int deliveries = 0;
};
using AlertSink = std::function<void(const BusAlert&)>;

struct BusOptions {
  int partitions = 16;   // by task_id hash; must match across replicas (NATS)
  int max_deliver = 5;   // deliveries before an event is dead-lettered
  int batch_max = 500;   // events per consumer batch (one store apply)
  Duration redeliver_delay = std::chrono::milliseconds(50);  // doubled per try
  Duration commit_timeout = std::chrono::seconds(30);        // Publish wait
  // NATS: a delivered but unacknowledged event is redelivered after this
  // (e.g. its consumer died). Longer than a store commit ever takes.
  Duration ack_wait = std::chrono::seconds(10);
  // NATS: stream name and subject prefix ("<prefix>.<partition>").
  std::string stream = "APOLLO_EVENTS";
  std::string subject_prefix = "apollo.events";
  // False: publish only, no consumers in this process (a publishing replica,
  // or a test that wants events held but not applied).
  bool consume = true;
  AlertSink on_alert;  // may be empty; called from consumer threads
};

struct PublishAck {
  uint64_t acked_seq = 0;     // node's contiguous high-water mark (0: none)
  size_t committed = 0;       // events committed by this bus (incl. duplicates)
  size_t dead_lettered = 0;   // events parked in the dead-letter queue
  // One per published event, same order: the store's outcome; kDuplicate
  // when the store already had it (settled by its mark); nullopt when
  // dead-lettered.
  std::vector<std::optional<store::Outcome>> outcomes;
};

// Consumer lag of one partition.
struct PartitionLag {
  int partition = 0;
  uint64_t published = 0;     // events accepted into the partition
  uint64_t applied = 0;       // committed or dead-lettered
  uint64_t pending = 0;       // not yet applied (published - applied, or the
                              // server's count for NATS)
  uint64_t dead_lettered = 0;
  Duration oldest_unapplied_age{0};  // 0 when nothing is pending
};

class EventBus {
 public:
  virtual ~EventBus() = default;

  // Connects and starts the consumers. Idempotent.
  virtual Status Start() = 0;
  // Starts the consumers of a bus opened with consume = false: a follower
  // orchestrator that became the leader (docs/replicas.md). Idempotent; call
  // after Start.
  virtual Status StartConsumers() = 0;
  // Stops the consumers; in-flight batches finish or are left to redelivery.
  // Pending publishes complete with kUnavailable. Idempotent.
  virtual void Stop() = 0;

  // Publishes one agent's batch. Every event must have node_id == node_id
  // (kInvalidArgument otherwise, nothing published). See the contract above.
  virtual std::future<Result<PublishAck>> Publish(std::string node_id,
                                                  std::vector<Event> events) = 0;

  // Lag of every partition, index = partition.
  virtual Result<std::vector<PartitionLag>> Lag() = 0;

  // Re-publishes a dead letter (after its cause was fixed) and waits for it
  // to commit; the letter is removed once committed. kNotFound if no such
  // letter; kFailedPrecondition if it still cannot be applied (it stays).
  virtual Status ReplayDeadLetter(int64_t id) = 0;
  // Replays every letter; returns how many committed.
  virtual Result<int> ReplayAllDeadLetters() = 0;
  // Gives up on a letter: the event is applied as is (the store records it
  // as malformed / unknown with an alert, closing the node's sequence gap)
  // and the letter is removed.
  virtual Status DropDeadLetter(int64_t id) = 0;

  virtual std::string Name() const = 0;  // "embedded", "nats://..."

  // (task, node) rows the store has just committed (the submit path): a bus
  // that checks events against the store's rows may note them instead of
  // reading them back. A hint only; the default ignores it.
  virtual void RowsStored(const std::vector<std::pair<std::string, std::string>>& task_node) {
    (void)task_node;
  }
};

// The partition of a task: FNV-1a 64 of task_id mod n. Stable across
// processes and builds (replicas must agree on NATS subjects).
int PartitionOf(std::string_view task_id, int partitions);

}  // namespace apollo::bus
