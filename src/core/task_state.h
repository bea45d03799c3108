#pragma once

// The state machine of one (task, node) pair, and the roll-up of a task's
// per-node states into its overall status.
//
// This is the only place that decides which transitions are legal. The store
// checks every write against CheckTransition() again inside its transaction,
// and the agent runs its local state machine through the same function.
//
//   PENDING    -> DISPATCHED | CANCELLED | TIMEOUT*
//   DISPATCHED -> RUNNING | CANCELLED | TIMEOUT
//   RUNNING    -> SUCCEEDED | FAILED | TIMEOUT | CANCELLED
//   FAILED     -> RETRYING
//   TIMEOUT    -> RETRYING
//   RETRYING   -> RUNNING | CANCELLED | TIMEOUT*
//
// * not started within the task's start_timeout (schedule-to-start): the
//   node never took it, so it times out and the retry policy decides.
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

// The legal steps by which an agent's reported outcome `to` is applied to a
// row in state `from`, the agent's event already fenced to the row's current
// attempt. Normally the one step {to}, when CheckTransition allows it.
//
// One case takes two steps: the row still waits for the agent's
// acknowledgement (DISPATCHED, or RETRYING re-sent) and the agent reports a
// finished run (SUCCEEDED — or ALREADY_DONE with its cached result — or
// FAILED). The agent ran this attempt; only its ACCEPTED never reached the
// store (the store was restored from an older backup, the task submitted
// again after a restore, an ack-timeout resend answered from the agent's
// cache, a node cut off and back). The outcome is then applied along the
// legal path {RUNNING, to}, each step in the history, instead of being
// refused (which left the row DISPATCHED and re-sent on every ack timeout,
// forever) or widening the table (DISPATCHED -> SUCCEEDED would also accept a
// run nobody acknowledged from any caller, e.g. the reconciler or an operator).
//
// Why the attempt fencing is enough to make this safe: an ack-timeout resend
// carries the same attempt (no new attempt is made for a resend), so the
// agent's ALREADY_DONE / SUCCEEDED of that attempt passes the fence and
// completes the row; an outcome of an attempt the center superseded (a retry
// after FAILED/TIMEOUT) is still recorded as stale and changes nothing.
//
// size == 0: refused (CheckTransition(from, to).reason says why).
struct ReportPath {
  std::array<TaskState, 2> steps{};
  int size = 0;
  bool implied_running() const { return size == 2; }
  std::span<const TaskState> view() const& { return {steps.data(), static_cast<size_t>(size)}; }
  // A view of a temporary would dangle (ASan caught one in a test).
  std::span<const TaskState> view() const&& = delete;
};
ReportPath AgentReportPath(TaskState from, TaskState to);

// PENDING/RETRYING -> TIMEOUT: the center's "not started" verdict (the
// schedule-to-start deadline). A TIMEOUT an agent reports means its run
// started and ran out of time, so agent reports and reconciliation never
// take this edge; they go via RUNNING.
bool IsNotStartedEdge(TaskState from, TaskState to);

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
