#pragma once

// Packs the intents queued for one node into CenterMessages the agent
// accepts: each IntentBatch holds intents in the given order up to
// kIntentBatchBytes serialized (core/wire_limits.h); an intent larger than
// that on its own is sent alone (it is still below the agent's receive
// limit: submissions bound its params and metadata).
//
// Thread-safety: a pure function.

#include <vector>

#include "apollo/v1/agent.pb.h"
#include "core/wire_limits.h"

namespace apollo::orchestrator {

// Sending order by priority: high 0, normal 1, low 2 (after an outage a
// node's backlog drains high priority first).
inline int IntentRank(const apollo::v1::Intent& intent) {
  switch (intent.priority()) {
    case apollo::v1::PRIORITY_HIGH:
      return 0;
    case apollo::v1::PRIORITY_LOW:
      return 2;
    default:
      return 1;
  }
}

std::vector<apollo::v1::CenterMessage> BatchIntents(std::vector<apollo::v1::Intent> intents,
                                                    size_t max_bytes = kIntentBatchBytes);

}  // namespace apollo::orchestrator
