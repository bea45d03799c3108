#pragma once

// Which of the messages the fetchers have handed over the consumer's apply
// thread should take now, so that one send round (nats_bus.cc: the Publish
// calls sent together, one message per partition) reaches the store in ONE
// op. A publish completes when its last event commits; a round cut over
// several ops makes it wait for each (BENCHMARKS.md, "Event bus", 17:45 UTC:
// rounds spread over 1-7 ops before this).
//
// The rule: a round some of whose parts have not been handed over yet is
// held back, with everything behind it in each partition (per-partition
// order), and so is any round with a part behind a held message; at most
// `max_wait` after its first part was handed over (a part may never come:
// another orchestrator's consumer may have fetched it). Messages without a
// round tag (an older publisher; the worker also drops the tag of a
// redelivery, whose round-mates are done) never wait.
//
// Thread-safety: pure function.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"

namespace apollo::bus::nats {

// Hold times are measured on the monotonic clock: a wall-clock jump must not
// hold a round for an hour.
using Instant = std::chrono::steady_clock::time_point;

// The kRoundHeader value: "<round id>/<messages in the round>".
std::string FormatRoundTag(std::string_view round_id, size_t parts);
struct RoundTag {
  std::string id;
  size_t parts = 1;
};
// nullopt for a missing or malformed value (treated as a round of one).
std::optional<RoundTag> ParseRoundTag(const char* value);

// One handed-over message, as the cut sees it (`round` views the caller's
// storage, which must outlive the call).
struct Waiting {
  std::string_view round;  // empty: untagged, never waits
  size_t parts = 1;
  Instant handed{};  // when it was handed over
};

struct Cut {
  std::vector<size_t> take;  // per partition: how many from the front
  // Set when something is held: when the earliest hold expires.
  std::optional<Instant> recheck;
  // Incomplete rounds no longer held: their wait ran out.
  size_t expired = 0;
};

Cut CutAtWholeRounds(const std::vector<std::vector<Waiting>>& waiting, Instant now,
                     Duration max_wait);

}  // namespace apollo::bus::nats
