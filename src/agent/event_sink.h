#pragma once

// Where the executor hands each event once it is durable in the WAL: the
// session with the center (or a fake link in tests). Events not yet
// acknowledged by the center stay in the WAL and are resent from there on
// reconnect, so a sink may drop events while disconnected.

#include <vector>

#include "core/event.h"

namespace apollo::agent {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Called once per event, after it is durable, from executor threads; may
  // be called concurrently and, across tasks, not in seq order. Must not
  // block for long and must not call back into the Executor.
  virtual void OnDurableEvent(const Event& event) = 0;
  // The events one group commit made durable, in order: one call for the
  // lot, so a sink that wakes a writer per call wakes it once. Default: one
  // OnDurableEvent each.
  virtual void OnDurableEvents(const std::vector<Event>& events) {
    for (const Event& e : events) OnDurableEvent(e);
  }
};

}  // namespace apollo::agent
