#pragma once

// A task's `rollout:` block: the matched nodes are changed in batches, not
// all at once — a canary first, then batches of batch_size, each opened
// once the one before it ended, with a failure budget that pauses or aborts
// the rollout when breached (docs/rollouts.md).
//
// Batches are chosen deterministically: the task's nodes in node_id order,
// the first `canary` of them in batch 1, then batch_size at a time.
//
// Thread-safety: values and pure functions.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace apollo {

enum class BreachAction : int { kPause = 0, kAbort = 1 };
std::string_view BreachActionName(BreachAction a);
std::optional<BreachAction> ParseBreachAction(std::string_view name);

struct RolloutSpec {
  // Nodes per batch: a count, or (batch_percent > 0) a percentage of the
  // task's nodes, rounded up. One of them is set.
  int batch_size = 0;
  int batch_percent = 0;
  // Nodes changed first, in a batch of their own (0: no canary).
  int canary = 0;
  // After the canary batch: wait for `task approve`, or this long (0: go on).
  bool canary_approve = false;
  std::chrono::seconds canary_wait{0};
  // Between two batches (after the canary's wait, when there is one).
  std::chrono::seconds pause_between{0};
  // The failure budget, over the whole rollout: nodes that may end FAILED or
  // TIMEOUT for good before it is breached. Neither set: none may.
  std::optional<int> max_fail_percentage;  // 0..100 of the task's nodes
  std::optional<int> max_failures;
  BreachAction on_breach = BreachAction::kPause;

  friend bool operator==(const RolloutSpec&, const RolloutSpec&) = default;
};

// The batch (1-based) of each of `nodes` nodes, in node_id order.
std::vector<int> PlanBatches(const RolloutSpec& r, size_t nodes);
// How many batches PlanBatches makes (0 for no nodes).
int BatchCount(const RolloutSpec& r, size_t nodes);
// Failures tolerated over `nodes` nodes; one more breaches the budget.
int FailureBudget(const RolloutSpec& r, size_t nodes);
// "max_fail_percentage 20" / "max_failures 2" / "no failures".
std::string DescribeBudget(const RolloutSpec& r);

// Where a rollout stands (kept by the store, driven by the orchestrator).
enum class RolloutState : int {
  kRunning = 0,           // the open batch runs
  kWaiting = 1,           // the open batch ended; the next opens at next_at
  kAwaitingApproval = 2,  // the canary batch ended; `task approve` opens the next
  kPaused = 3,            // by an operator, or by a breached budget
  kAborting = 4,          // aborted; still rolling back nodes that finish
  kAborted = 5,           // final
  kCompleted = 6,         // final: every batch ran
};
std::string_view RolloutStateName(RolloutState s);
std::optional<RolloutState> ParseRolloutState(std::string_view name);
inline bool IsFinalRollout(RolloutState s) {
  return s == RolloutState::kAborted || s == RolloutState::kCompleted;
}

}  // namespace apollo
