#include "orchestrator/rollout_plan.h"

#include <algorithm>

namespace apollo::orchestrator {
namespace {

bool FailedForGood(const store::NodeRow& n, int max_retries) {
  return (n.state == TaskState::kFailed || n.state == TaskState::kTimeout) &&
         (n.permanent || n.retries >= max_retries);
}

store::RolloutChange Same(const store::RolloutRow& r) {
  store::RolloutChange c;
  c.task_id = r.task_id;
  c.expected_version = r.version;
  c.state = r.state;
  c.open_batch = r.open_batch;
  c.paused_by = r.paused_by;
  c.reason = r.reason;
  c.next_at = r.next_at;
  c.tolerated = r.tolerated;
  c.cause = store::Cause::kRollout;
  return c;
}

std::string Budget(const RolloutSpec& spec, const store::RolloutRow& r, const RolloutTally& t) {
  std::string s = std::to_string(t.failures) + " of " + std::to_string(t.nodes) +
                  " node(s) failed, " + std::to_string(ToleratedFailures(spec, r, t.nodes)) +
                  " tolerated (" + DescribeBudget(spec);
  if (r.tolerated > 0) s += ", +" + std::to_string(r.tolerated) + " accepted on resume";
  return s + ")";
}

std::string Suffix(const std::string& reason) { return reason.empty() ? "" : ": " + reason; }

}  // namespace

RolloutTally TallyRollout(const store::TaskRow& task) {
  RolloutTally t;
  const int max_retries = task.spec.retry_policy.max_retries;
  const int open = task.rollout ? task.rollout->open_batch : 0;
  t.all_ended = true;
  for (const store::NodeRow& n : task.nodes) {
    ++t.nodes;
    const bool failed = FailedForGood(n, max_retries);
    const bool ended =
        failed || n.state == TaskState::kSucceeded || n.state == TaskState::kCancelled;
    t.failures += failed ? 1 : 0;
    t.succeeded += n.state == TaskState::kSucceeded ? 1 : 0;
    t.waiting += n.state == TaskState::kPending ? 1 : 0;
    t.all_ended = t.all_ended && ended;
    if (n.batch <= open) {
      ++t.open_rows;
      t.open_ended += ended ? 1 : 0;
    }
  }
  return t;
}

int ToleratedFailures(const RolloutSpec& spec, const store::RolloutRow& r, int nodes) {
  return FailureBudget(spec, static_cast<size_t>(nodes)) + r.tolerated;
}

std::optional<RolloutStep> NextRolloutStep(const RolloutSpec& spec, const store::RolloutRow& r,
                                           const RolloutTally& t, TimePoint now) {
  RolloutStep step{Same(r), ""};
  store::RolloutChange& c = step.change;
  if (IsFinalRollout(r.state)) return std::nullopt;
  if (r.state == RolloutState::kAborting) {
    if (!t.all_ended) return std::nullopt;
    c.state = RolloutState::kAborted;
    c.detail = "rollout aborted: every node ended (" + std::to_string(t.succeeded) +
               " had succeeded; rolled back where the task has an on_failure)";
    return step;
  }
  if (t.all_ended && r.state != RolloutState::kRunning && r.state != RolloutState::kWaiting) {
    // Paused or awaiting an approval, yet nothing is left (the task was
    // cancelled): it is over.
    c.state = RolloutState::kCompleted;
    c.next_at.reset();
    c.detail = "rollout ended while " + std::string(RolloutStateName(r.state)) +
               ": every node ended (" + std::to_string(t.succeeded) + " succeeded)";
    return step;
  }
  if (r.state != RolloutState::kRunning && r.state != RolloutState::kWaiting) {
    return std::nullopt;  // awaiting approval, paused: an operator moves it
  }
  if (t.failures > ToleratedFailures(spec, r, t.nodes)) {
    const bool abort = spec.on_breach == BreachAction::kAbort;
    c.state = abort ? RolloutState::kAborting : RolloutState::kPaused;
    c.paused_by = "failure budget";
    c.reason = Budget(spec, r, t);
    c.next_at.reset();
    c.detail = std::string("rollout ") + (abort ? "aborted" : "paused") + " at batch " +
               std::to_string(r.open_batch) + " of " + std::to_string(r.batches) +
               ": failure budget breached, " + c.reason;
    step.alert = "task " + r.task_id + ": " + c.detail;
    return step;
  }
  if (t.all_ended) {
    c.state = RolloutState::kCompleted;
    c.next_at.reset();
    c.detail = "rollout completed: " + std::to_string(t.succeeded) + " of " +
               std::to_string(t.nodes) + " node(s) succeeded";
    return step;
  }
  if (t.open_ended < t.open_rows) return std::nullopt;  // the open batch still runs
  if (r.open_batch >= r.batches) return std::nullopt;   // rows end on their own
  if (r.state == RolloutState::kWaiting) {
    if (r.next_at && now < *r.next_at) return std::nullopt;
    c.state = RolloutState::kRunning;
    c.open_batch = r.open_batch + 1;
    c.next_at.reset();
    return step;
  }
  const bool after_canary = r.open_batch == 1 && spec.canary > 0;
  if (after_canary && spec.canary_approve) {
    c.state = RolloutState::kAwaitingApproval;
    c.detail = "canary batch ended (" + std::to_string(t.succeeded) +
               " succeeded): waiting for `apollo-cli task approve --task-id " + r.task_id + "`";
    return step;
  }
  const std::chrono::seconds wait = after_canary ? spec.canary_wait : spec.pause_between;
  if (wait.count() > 0) {
    c.state = RolloutState::kWaiting;
    c.next_at = now + wait;
    c.detail = "batch " + std::to_string(r.open_batch) + " of " + std::to_string(r.batches) +
               " ended; the next opens at " + FormatRfc3339(*c.next_at);
    return step;
  }
  c.open_batch = r.open_batch + 1;
  return step;
}

std::string_view RolloutActionName(RolloutAction a) {
  switch (a) {
    case RolloutAction::kPause:
      return "pause";
    case RolloutAction::kResume:
      return "resume";
    case RolloutAction::kApprove:
      return "approve";
    case RolloutAction::kAbort:
      return "abort";
  }
  return "pause";
}

std::optional<RolloutAction> ParseRolloutAction(std::string_view name) {
  for (RolloutAction a : {RolloutAction::kPause, RolloutAction::kResume, RolloutAction::kApprove,
                          RolloutAction::kAbort}) {
    if (RolloutActionName(a) == name) return a;
  }
  return std::nullopt;
}

Result<store::RolloutChange> OperatorRolloutChange(const RolloutSpec& spec,
                                                   const store::RolloutRow& r,
                                                   const RolloutTally& t, RolloutAction action,
                                                   const std::string& who,
                                                   const std::string& reason) {
  const std::string by = who.empty() ? "an operator" : who;
  auto refuse = [&](const std::string& why) {
    return Status::FailedPrecondition("cannot " + std::string(RolloutActionName(action)) +
                                      " the rollout of task " + r.task_id + ": it is " +
                                      std::string(RolloutStateName(r.state)) + why);
  };
  store::RolloutChange c = Same(r);
  c.cause = store::Cause::kOperator;
  switch (action) {
    case RolloutAction::kPause:
      if (r.state != RolloutState::kRunning && r.state != RolloutState::kWaiting &&
          r.state != RolloutState::kAwaitingApproval) {
        return refuse(r.state == RolloutState::kPaused ? " already (by " + r.paused_by + ")" : "");
      }
      c.state = RolloutState::kPaused;
      c.paused_by = by;
      c.reason = reason;
      c.next_at.reset();
      c.detail = "rollout paused by " + by + Suffix(reason);
      return c;
    case RolloutAction::kResume:
      if (r.state != RolloutState::kPaused) {
        return refuse(r.state == RolloutState::kAwaitingApproval
                          ? " (approve it: `apollo-cli task approve --task-id " + r.task_id + "`)"
                          : ", not paused");
      }
      // Resuming after a breach accepts the failures so far: the next one
      // breaches again.
      c.tolerated = std::max(r.tolerated, t.failures - FailureBudget(spec, t.nodes));
      c.state = RolloutState::kRunning;
      c.paused_by.clear();
      c.reason.clear();
      c.detail = "rollout resumed by " + by + Suffix(reason);
      if (c.tolerated > r.tolerated) {
        c.detail += " (" + std::to_string(t.failures) + " failure(s) accepted)";
      }
      return c;
    case RolloutAction::kApprove:
      if (r.state != RolloutState::kAwaitingApproval) {
        return refuse(", not waiting for an approval");
      }
      c.state = RolloutState::kRunning;
      c.open_batch = std::min(r.open_batch + 1, r.batches);
      c.detail = "canary approved by " + by + Suffix(reason);
      return c;
    case RolloutAction::kAbort:
      if (r.state == RolloutState::kAborting || IsFinalRollout(r.state)) return refuse("");
      c.state = RolloutState::kAborting;
      c.paused_by = by;
      c.reason = reason;
      c.next_at.reset();
      c.detail = "rollout aborted by " + by + Suffix(reason);
      return c;
  }
  return Status::InvalidArgument("unknown rollout action");
}

std::string DescribeRollout(const RolloutSpec& spec, const store::RolloutRow& r,
                            const RolloutTally& t) {
  std::string s = std::string(RolloutStateName(r.state)) + ", batch " +
                  std::to_string(r.open_batch) + " of " + std::to_string(r.batches) + ", " +
                  Budget(spec, r, t);
  if (!r.paused_by.empty()) {
    s += r.state == RolloutState::kAborting || r.state == RolloutState::kAborted ? ", aborted by "
                                                                                 : ", paused by ";
    s += r.paused_by + Suffix(r.reason);
  }
  if (r.state == RolloutState::kWaiting && r.next_at) {
    s += ", next batch at " + FormatRfc3339(*r.next_at);
  }
  return s;
}

}  // namespace apollo::orchestrator
