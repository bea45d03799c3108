#pragma once

// What one state change writes to a (task, node) row, and the rules that
// fill it, for both backends (src/store/{sqlite,postgres}): where the new
// state leaves the row waiting (FillDue), the error text of a failure's
// payload, and one step of an agent report's walk (event_verdict.h kWalk).
// Each backend keeps only its I/O (UpdateRow / ChangeRow).
//
// Thread-safety: values and pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/event.h"
#include "core/task_state.h"
#include "store/types.h"

namespace apollo::store::engine {

struct RowChange {
  TaskState to = TaskState::kPending;
  uint32_t attempt = 0;
  int retries = 0;
  DueKind due_kind = DueKind::kNone;
  std::optional<int64_t> due_at;
  std::string blocked_reason;
  std::optional<std::string> last_error;
  std::optional<std::string> result;  // stored apart when > kInlinePayloadMax
};

// Where `to` leaves a row with this exec timeout and retry budget waiting:
// due kind, due time, blocked reason. `ack_deadline` / `next_attempt_at`
// come from the orchestrator's request.
void FillDueFor(int64_t timeout_us, int max_retries, TaskState to, TimePoint now,
                std::optional<TimePoint> ack_deadline, std::optional<TimePoint> next_attempt_at,
                int retries, RowChange& change);

// The same for a backend's row type (with timeout_us and max_retries).
template <class Row>
void FillDue(const Row& cur, TaskState to, TimePoint now, std::optional<TimePoint> ack_deadline,
             std::optional<TimePoint> next_attempt_at, int retries, RowChange& change) {
  FillDueFor(cur.timeout_us, cur.max_retries, to, now, ack_deadline, next_attempt_at, retries,
             change);
}

// A failure's error text: the payload's "error" or "message" string, else
// its first kInlinePayloadMax bytes.
std::string ErrorFromPayload(std::string_view payload);

// One step of an agent event's walk (e moves the row to `step`): same
// attempt and retries, the step's due, the result of a SUCCEEDED, the error
// of a FAILED / TIMEOUT.
template <class Row>
RowChange WalkStep(const Row& cur, TaskState step, const Event& e, TimePoint now) {
  RowChange change;
  change.to = step;
  change.attempt = cur.attempt;
  change.retries = cur.retries;
  FillDue(cur, step, now, {}, {}, cur.retries, change);
  if (step == TaskState::kSucceeded) change.result = e.payload;
  if (step == TaskState::kFailed || step == TaskState::kTimeout) {
    change.last_error = ErrorFromPayload(e.payload);
  }
  return change;
}

}  // namespace apollo::store::engine
