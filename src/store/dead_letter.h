#pragma once

// A dead letter: an event the bus could not apply after N deliveries, parked
// in the store with why (issue 7). Values only.

#include <cstdint>
#include <string>

#include "core/clock.h"
#include "core/event.h"

namespace apollo::store {

struct DeadLetter {
  int64_t id = 0;             // assigned by AddDeadLetter
  Event event;
  std::string reason;         // why it could not be applied
  int deliveries = 0;         // how many times it was tried
  TimePoint parked_at{};      // store clock, set by AddDeadLetter
};

}  // namespace apollo::store
