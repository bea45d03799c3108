#pragma once

// The size of what crosses the agent stream, agreed by both ends: the center
// never sends an agent a CenterMessage larger than the agent accepts.
//
//  - The center packs queued intents into IntentBatch messages of at most
//    kIntentBatchBytes (serialized); an intent larger than that on its own
//    goes alone (orchestrator/intent_batches.h).
//  - The agent's gRPC receive limit is kAgentMaxReceiveBytes, which is
//    larger than a full batch plus the largest single intent a submission
//    can make (its params and metadata are each bounded by ParseLimits'
//    max_payload_bytes; ids and names are short): checked below.
//
// Thread-safety: constants.

#include <cstddef>

#include "core/task_spec.h"

namespace apollo {

inline constexpr size_t kIntentBatchBytes = 1 << 20;      // 1 MiB per IntentBatch message
inline constexpr size_t kAgentMaxReceiveBytes = 8 << 20;  // the agent's gRPC receive limit

// The most one intent can weigh, serialized: params and metadata at their
// parse limit, plus generous room for ids, names and framing.
inline constexpr size_t kMaxIntentBytes = 2 * ParseLimits{}.max_payload_bytes + (64 << 10);

static_assert(kIntentBatchBytes + kMaxIntentBytes <= kAgentMaxReceiveBytes,
              "the agent must accept the center's largest message");

}  // namespace apollo
