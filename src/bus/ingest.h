#pragma once

// The orchestrator's seam onto the bus: publish an agent's batch and see the
// result as the store's ApplyResult (acked_seq for the node, one outcome per
// event), so ingestion keeps one code path whichever way events travel.
// Dead-lettered events show as Outcome::kMalformed with the reason
// "dead-lettered by the event bus" (the letter has the real reason).
//
// The returned future is deferred: it waits for the bus's answer in the
// thread that calls get() (the orchestrator's ingest thread).

#include <future>
#include <string>
#include <vector>

#include "bus/event_bus.h"
#include "store/types.h"

namespace apollo::bus {

std::future<Result<store::ApplyResult>> PublishForIngest(EventBus& bus, std::string node_id,
                                                         std::vector<Event> events);

}  // namespace apollo::bus
