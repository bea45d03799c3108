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
  std::optional<int64_t> start_deadline;
  bool permanent = false;  // FAILED for good: no retry decision
};

// What a row and its task say that decides where a change leaves it.
struct DueFacts {
  int64_t timeout_us = 0;
  int max_retries = 0;
  int64_t start_timeout_us = 0;           // 0: no schedule-to-start deadline
  bool compensate = false;                // the task has on_failure
  std::optional<int64_t> start_deadline;  // the row's, before the change
};

// Where `to` leaves a row with this exec timeout and retry budget waiting:
// due kind, due time, blocked reason. `ack_deadline` / `next_attempt_at`
// come from the orchestrator's request.
//
// The schedule-to-start deadline: a row about to be retried must be RUNNING
// by next_attempt_at + start_timeout; DISPATCHED keeps the deadline it had;
// it is gone once RUNNING or final. While it stands, the row is due no later
// than the deadline (the orchestrator times it out, cause not_started).
// FAILED/TIMEOUT: a retry decision while retries are left and the failure is
// not permanent, else final: kCompensate when the task has on_failure.
void FillDueFor(const DueFacts& facts, TaskState to, TimePoint now,
                std::optional<TimePoint> ack_deadline, std::optional<TimePoint> next_attempt_at,
                int retries, bool permanent, RowChange& change);

// The same for a row type with the DueFacts fields.
template <class Row>
void FillDue(const Row& cur, TaskState to, TimePoint now, std::optional<TimePoint> ack_deadline,
             std::optional<TimePoint> next_attempt_at, int retries, RowChange& change,
             bool permanent = false) {
  FillDueFor(DueFacts{cur.timeout_us, cur.max_retries, cur.start_timeout_us, cur.compensate,
                      cur.start_deadline},
             to, now, ack_deadline, next_attempt_at, retries, permanent, change);
}

// The earlier of a due time and a schedule-to-start deadline.
std::optional<int64_t> EarlierDue(std::optional<int64_t> due, std::optional<int64_t> deadline);

// True when a failure's payload says it is permanent ({"kind": "permanent"}:
// an unknown intent, invalid params, refused by the node's policy).
bool PermanentFailure(std::string_view payload);

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
  const bool permanent = step == TaskState::kFailed && PermanentFailure(e.payload);
  FillDue(cur, step, now, {}, {}, cur.retries, change, permanent);
  change.permanent = permanent;
  if (step == TaskState::kSucceeded) change.result = e.payload;
  if (step == TaskState::kFailed || step == TaskState::kTimeout) {
    change.last_error = ErrorFromPayload(e.payload);
  }
  return change;
}

}  // namespace apollo::store::engine
