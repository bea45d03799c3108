#pragma once

// The rules of a rollout, as pure functions of what the store says: when a
// batch ended, whether the failure budget is breached, when the next batch
// opens, and what an operator's pause / resume / approve / abort does. The
// orchestrator (rollouts.cc) reads the rows, asks these, and writes the
// answer with a compare-and-set; nothing here keeps state, so a restart or
// another orchestrator picks up exactly where the store says it stands.
//
// Thread-safety: pure functions.

#include <optional>
#include <string>

#include "core/clock.h"
#include "core/status.h"
#include "store/types.h"

namespace apollo::orchestrator {

// A rollout's rows, counted.
struct RolloutTally {
  int nodes = 0;
  // Ended FAILED or TIMEOUT for good (no retry left): against the budget.
  int failures = 0;
  int succeeded = 0;
  // Rows of the batches opened so far, and how many of them ended.
  int open_rows = 0;
  int open_ended = 0;
  // Rows not started yet (PENDING), whatever their batch.
  int waiting = 0;
  bool all_ended = false;  // every row is final
};
RolloutTally TallyRollout(const store::TaskRow& task);

// The failures the rollout tolerates now: its budget plus what a resume
// after a breach accepted.
int ToleratedFailures(const RolloutSpec& spec, const store::RolloutRow& r, int nodes);

// The rollout's next state, or nullopt when it stays as it is. `alert`, when
// set, is the line to raise (a breached budget).
struct RolloutStep {
  store::RolloutChange change;
  std::string alert;
};
std::optional<RolloutStep> NextRolloutStep(const RolloutSpec& spec, const store::RolloutRow& r,
                                           const RolloutTally& t, TimePoint now);

enum class RolloutAction { kPause, kResume, kApprove, kAbort };
std::string_view RolloutActionName(RolloutAction a);
std::optional<RolloutAction> ParseRolloutAction(std::string_view name);

// What an operator's action does to the rollout, or why it cannot:
// kFailedPrecondition naming the state it is in.
Result<store::RolloutChange> OperatorRolloutChange(const RolloutSpec& spec,
                                                   const store::RolloutRow& r,
                                                   const RolloutTally& t, RolloutAction action,
                                                   const std::string& who,
                                                   const std::string& reason);

// "batch 2 of 5, 1 of 10 failed (budget 2), paused by alice: ..." for
// `task status` and the dashboard.
std::string DescribeRollout(const RolloutSpec& spec, const store::RolloutRow& r,
                            const RolloutTally& t);

}  // namespace apollo::orchestrator
