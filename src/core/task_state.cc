#include "core/task_state.h"

namespace apollo {
namespace {

constexpr int Bit(TaskState s) { return 1 << static_cast<int>(s); }

// kAllowed[from] is the set of states `from` may move to, as a bit mask.
constexpr std::array<int, kNumTaskStates> kAllowed = [] {
  std::array<int, kNumTaskStates> a{};
  auto at = [&a](TaskState s) -> int& { return a[static_cast<int>(s)]; };
  // -> TIMEOUT from PENDING / RETRYING: not started within the task's
  // start_timeout (the node never took it).
  at(TaskState::kPending) =
      Bit(TaskState::kDispatched) | Bit(TaskState::kCancelled) | Bit(TaskState::kTimeout);
  at(TaskState::kDispatched) =
      Bit(TaskState::kRunning) | Bit(TaskState::kCancelled) | Bit(TaskState::kTimeout);
  at(TaskState::kRunning) = Bit(TaskState::kSucceeded) | Bit(TaskState::kFailed) |
                            Bit(TaskState::kTimeout) | Bit(TaskState::kCancelled);
  at(TaskState::kFailed) = Bit(TaskState::kRetrying);
  at(TaskState::kTimeout) = Bit(TaskState::kRetrying);
  at(TaskState::kRetrying) =
      Bit(TaskState::kRunning) | Bit(TaskState::kCancelled) | Bit(TaskState::kTimeout);
  return a;
}();

// Why a refused transition is refused, per source state: the reasons are
// static strings so TransitionCheck can hand out string_views.
constexpr std::array<std::string_view, kNumTaskStates> kRefusal = {
    "PENDING may only go to DISPATCHED, CANCELLED or TIMEOUT",
    "DISPATCHED may only go to RUNNING, CANCELLED or TIMEOUT",
    "RUNNING may only go to SUCCEEDED, FAILED, TIMEOUT or CANCELLED",
    "SUCCEEDED is final",
    "FAILED may only go to RETRYING",
    "RETRYING may only go to RUNNING, CANCELLED or TIMEOUT",
    "CANCELLED is final",
    "TIMEOUT may only go to RETRYING",
};

constexpr std::array<std::string_view, kNumTaskStates> kSelf = {
    "already PENDING",   "already DISPATCHED", "already RUNNING",
    "already SUCCEEDED", "already FAILED",     "already RETRYING",
    "already CANCELLED", "already TIMEOUT",
};

}  // namespace

std::string_view TaskStateName(TaskState s) {
  static constexpr std::array<std::string_view, kNumTaskStates> kNames = {
      "PENDING", "DISPATCHED", "RUNNING",   "SUCCEEDED",
      "FAILED",  "RETRYING",   "CANCELLED", "TIMEOUT"};
  int i = static_cast<int>(s);
  return (i >= 0 && i < kNumTaskStates) ? kNames[i] : "INVALID";
}

std::optional<TaskState> ParseTaskState(std::string_view name) {
  for (TaskState s : kAllTaskStates) {
    if (TaskStateName(s) == name) return s;
  }
  return std::nullopt;
}

TransitionCheck CheckTransition(TaskState from, TaskState to) {
  int f = static_cast<int>(from);
  int t = static_cast<int>(to);
  if (f < 0 || f >= kNumTaskStates || t < 0 || t >= kNumTaskStates) {
    return {false, "unknown state"};
  }
  if (from == to) return {false, kSelf[f]};
  if (kAllowed[f] & Bit(to)) return {true, {}};
  return {false, kRefusal[f]};
}

bool IsNotStartedEdge(TaskState from, TaskState to) {
  return to == TaskState::kTimeout && (from == TaskState::kRetrying || from == TaskState::kPending);
}

ReportPath AgentReportPath(TaskState from, TaskState to) {
  ReportPath p;
  const bool not_started_edge = IsNotStartedEdge(from, to);
  if (CheckTransition(from, to).allowed && !not_started_edge) {
    p.steps[0] = to;
    p.size = 1;
    return p;
  }
  bool awaiting_ack = from == TaskState::kDispatched || from == TaskState::kRetrying;
  bool finished_run = to == TaskState::kSucceeded || to == TaskState::kFailed ||
                      (not_started_edge && awaiting_ack);
  if (awaiting_ack && finished_run && CheckTransition(from, TaskState::kRunning).allowed &&
      CheckTransition(TaskState::kRunning, to).allowed) {
    p.steps = {TaskState::kRunning, to};
    p.size = 2;
  }
  return p;
}

bool IsFinal(TaskState s) {
  return s == TaskState::kSucceeded || s == TaskState::kCancelled;
}

bool IsFinalUnlessRetried(TaskState s) {
  return s == TaskState::kFailed || s == TaskState::kTimeout;
}

TaskState RollUp(std::span<const TaskState> node_states) {
  if (node_states.empty()) return TaskState::kPending;
  std::array<int, kNumTaskStates> n{};
  for (TaskState s : node_states) n[static_cast<int>(s)]++;
  auto count = [&n](TaskState s) { return n[static_cast<int>(s)]; };
  const int total = static_cast<int>(node_states.size());

  if (count(TaskState::kRunning) > 0) return TaskState::kRunning;
  if (count(TaskState::kRetrying) > 0) return TaskState::kRetrying;
  if (count(TaskState::kDispatched) > 0) return TaskState::kDispatched;
  if (count(TaskState::kPending) > 0) {
    return count(TaskState::kPending) == total ? TaskState::kPending
                                                : TaskState::kDispatched;
  }
  if (count(TaskState::kSucceeded) == total) return TaskState::kSucceeded;
  if (count(TaskState::kCancelled) == total) return TaskState::kCancelled;
  if (count(TaskState::kFailed) > 0) return TaskState::kFailed;
  if (count(TaskState::kTimeout) > 0) return TaskState::kTimeout;
  return TaskState::kCancelled;
}

}  // namespace apollo
