#pragma once

// The embedded bus: in-memory partition queues inside the orchestrator, up to
// 4 consumer workers, group commit through the store. A publish whose
// partitions have nothing pending skips the queues: its healthy events go to
// the store as ONE op (the "direct path"), settled by a completion thread.
//
// Ordering: within a partition events are applied in publish order except
// (a) an event waiting for a redelivery (poison suspect, failed commit on the
// partition path) lets later ready events of its partition pass, and (b)
// after a failed direct op, a later direct op already submitted may commit
// before the failed op's retry (as without a bus, where the session is closed
// and the agent resends from its WAL). Details: src/bus/README.md
// "Embedded: the direct path".
//
// No second copy of the data: the agents' WALs are the persistent queue. An
// event lives here only between Publish and its commit; the agent keeps it
// until acknowledged (after the commit), so a crash of the orchestrator loses
// nothing: the agents resend the unacknowledged tail on reconnect. Writing a
// log of our own would double every event's fsync for no gain.
//
// Thread-safety: thread-safe; each partition and each worker has its own
// mutex. Up to 4 worker threads each apply several partitions per store op.

#include <memory>

#include "bus/event_bus.h"
#include "core/clock.h"
#include "store/state_store.h"

namespace apollo::bus {

// `store` and `clock` must outlive the bus.
std::unique_ptr<EventBus> NewEmbeddedBus(const BusOptions& options, store::StateStore& store,
                                         const Clock& clock);

}  // namespace apollo::bus
