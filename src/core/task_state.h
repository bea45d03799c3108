#pragma once

// The state machine of one (task, node) pair, and the roll-up of a task's
// per-node states into its overall status.
//
// This is the only place that decides which transitions are legal. The store
// checks every write against CheckTransition() again inside its transaction,
// and the agent runs its local state machine through the same function.
//
//   PENDING    -> DISPATCHED | CANCELLED
//   DISPATCHED -> RUNNING | CANCELLED | TIMEOUT
//   RUNNING    -> SUCCEEDED | FAILED | TIMEOUT | CANCELLED
//   FAILED     -> RETRYING
//   TIMEOUT    -> RETRYING
//   RETRYING   -> RUNNING | CANCELLED
//
// Note RETRYING -> RUNNING: a retry is re-sent by the dispatcher while the row
// stays RETRYING, and the agent's acceptance moves it to RUNNING.
//
// Thread-safety: pure functions.

#include <array>
#include <optional>
#include <span>
#include <string_view>

namespace apollo {

enum class TaskState : int {
  kPending = 0,
  kDispatched = 1,
  kRunning = 2,
  kSucceeded = 3,
  kFailed = 4,
  kRetrying = 5,
  kCancelled = 6,
  kTimeout = 7,
};

inline constexpr int kNumTaskStates = 8;
inline constexpr std::array<TaskState, kNumTaskStates> kAllTaskStates = {
    TaskState::kPending,  TaskState::kDispatched, TaskState::kRunning,
    TaskState::kSucceeded, TaskState::kFailed,    TaskState::kRetrying,
    TaskState::kCancelled, TaskState::kTimeout};

// "PENDING", "DISPATCHED", ...
std::string_view TaskStateName(TaskState s);
// Inverse of TaskStateName (exact, upper case); nullopt if unknown.
std::optional<TaskState> ParseTaskState(std::string_view name);

struct TransitionCheck {
  bool allowed = false;
  // Empty when allowed; otherwise why not, for the alert row and the log,
  // e.g. "SUCCEEDED is final" or "PENDING cannot go to RUNNING (allowed: ...)".
  std::string_view reason;
};

// Decides one transition. A transition to the same state is not a
// transition and is refused ("already RUNNING").
TransitionCheck CheckTransition(TaskState from, TaskState to);

inline bool IsTransitionAllowed(TaskState from, TaskState to) {
  return CheckTransition(from, to).allowed;
}

// SUCCEEDED and CANCELLED: nothing can ever follow.
bool IsFinal(TaskState s);

// FAILED or TIMEOUT: final unless a retry is granted (by policy or operator).
bool IsFinalUnlessRetried(TaskState s);

// Settled for the purposes of roll-up and retention: final, or FAILED/TIMEOUT
// with `retries_exhausted`.
inline bool IsSettled(TaskState s, bool retries_exhausted) {
  return IsFinal(s) || (IsFinalUnlessRetried(s) && retries_exhausted);
}

// The overall status of a task from its nodes' states, by these rules in
// order:
//   - no nodes                                  -> PENDING
//   - any node RUNNING                          -> RUNNING
//   - any node RETRYING                         -> RETRYING
//   - any node DISPATCHED                       -> DISPATCHED
//   - any node PENDING                          -> PENDING if all are PENDING,
//                                                  else DISPATCHED (partly out)
//   - otherwise every node is in SUCCEEDED/FAILED/TIMEOUT/CANCELLED:
//       all SUCCEEDED -> SUCCEEDED; all CANCELLED -> CANCELLED;
//       any FAILED -> FAILED; any TIMEOUT -> TIMEOUT;
//       else (SUCCEEDED mixed with CANCELLED) -> CANCELLED.
TaskState RollUp(std::span<const TaskState> node_states);

}  // namespace apollo
