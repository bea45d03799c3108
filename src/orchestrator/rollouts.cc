// The orchestrator's part in rollouts (rollout_plan.h has the rules): each
// dispatch pass moves every active rollout one step as the store says it
// stands, cancels what an aborted rollout had not started and rolls back
// what it had; operators pause, resume, approve and abort through
// ControlRollout. Every write is a compare-and-set on the rollout's version,
// so the pass and an operator never both move one rollout.
#include "orchestrator/orchestrator.h"
#include "orchestrator/rollout_plan.h"

namespace apollo::orchestrator {

void Orchestrator::DriveRollouts(Pass& pass) {
  const TimePoint now = clock_.Now();
  if (!rollouts_kicked_.exchange(false) && now - rollouts_driven_ < kRolloutInterval) return;
  rollouts_driven_ = now;
  auto active = store_.ListRollouts(/*active_only=*/true);
  if (!active.ok()) return;  // the store is unavailable: next pass
  for (const store::RolloutRow& listed : *active) {
    auto task = store_.GetTask(listed.task_id);
    if (!task.ok() || !task->spec.rollout || !task->rollout) continue;
    const store::RolloutRow& r = *task->rollout;  // as read with its rows
    // Aborting: cancel what has not started, roll back what changed; it
    // ends only once every rollback exists.
    const bool rolled_back = r.state != RolloutState::kAborting || AbortRows(*task, pass);
    auto step = NextRolloutStep(*task->spec.rollout, r, TallyRollout(*task), now);
    if (!step) continue;
    if (step->change.state == RolloutState::kAborted && !rolled_back) continue;
    Status st = store_.UpdateRollout(step->change);
    if (!st.ok()) continue;  // moved meanwhile (an operator): the next pass reads it again
    if (!step->alert.empty()) RaiseAlert("rollout_breached", "", r.task_id, step->alert);
    if (step->change.state == RolloutState::kAborting) {
      // Stop now, in this pass, before it dispatches anything of it.
      CommitStaged(pass);
      auto after = store_.GetTask(r.task_id);
      if (after.ok()) AbortRows(*after, pass);
    }
    if (IsFinalRollout(step->change.state)) {
      std::lock_guard<std::mutex> lock(mu_);
      std::erase_if(rolled_back_, [&](const auto& k) { return k.first == r.task_id; });
    }
    task_watches_.Notify(r.task_id);
    Kick();
  }
  CommitStaged(pass);
}

bool Orchestrator::AbortRows(const store::TaskRow& task, Pass& pass) {
  const TaskSpec& spec = task.spec;
  std::vector<store::NewTask> rollbacks;
  std::vector<const store::NodeRow*> rolled;
  for (const store::NodeRow& n : task.nodes) {
    // Not started (PENDING), or waiting for a retry: never again.
    if (n.state == TaskState::kPending || n.state == TaskState::kRetrying) {
      store::TransitionRequest r;
      r.task_id = n.task_id;
      r.node_id = n.node_id;
      r.to = TaskState::kCancelled;
      r.cause = store::Cause::kRolloutAborted;
      r.expected_version = n.version;
      r.detail = n.state == TaskState::kPending
                     ? "rollout_aborted: not started (batch " + std::to_string(n.batch) + ")"
                     : "rollout_aborted: its retry will not run";
      std::function<void(Outbox&)> then;
      if (n.state == TaskState::kRetrying) {
        then = [this, n](Outbox&) {
          SendCancel(n.task_id, n.node_id, n.attempt, "rollout_aborted");
        };
      }
      Stage(pass, std::move(r), std::move(then));
      continue;
    }
    // The change ran there: it SUCCEEDED, or a run of it failed and the
    // abort cancelled its retry (attempt >= 1). Its on_failure undoes it.
    // (A row that failed for good gets it from the dispatcher's
    // compensation.)
    const bool ran =
        n.state == TaskState::kSucceeded || (n.state == TaskState::kCancelled && n.attempt >= 1);
    if (!ran || !spec.on_failure) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (rolled_back_.count({n.task_id, n.node_id})) continue;
    }
    rollbacks.push_back(CompensationTask(spec, n.node_id));
    rolled.push_back(&n);
  }
  if (rollbacks.empty()) return true;
  // The same ids every pass: created once (created = false after).
  auto created = store_.CreateTasks(rollbacks);
  if (!created.ok()) return false;  // tried again next pass
  std::vector<store::NewTask> stored;
  for (size_t i = 0; i < created->size() && i < rollbacks.size(); ++i) {
    const store::NodeRow& n = *rolled[i];
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (rolled_back_.size() >= kMaxProgressAsks) rolled_back_.clear();  // a bound
      rolled_back_.insert({n.task_id, n.node_id});
    }
    if (!(*created)[i].created) continue;
    store::TransitionRequest note;
    note.task_id = n.task_id;
    note.node_id = n.node_id;
    note.cause = store::Cause::kCompensation;
    note.compensated = true;
    note.detail = "rollback task " + rollbacks[i].spec.task_id + " (" + spec.on_failure->intent +
                  ") started: the rollout was aborted after this node had run the change";
    Stage(pass, std::move(note));
    stored.push_back(rollbacks[i]);
  }
  if (!stored.empty()) {
    TasksStored(std::move(stored));
    Kick();
  }
  return true;
}

Result<store::RolloutRow> Orchestrator::ControlRollout(const std::string& task_id,
                                                       RolloutAction action, const std::string& who,
                                                       const std::string& reason) {
  // A compare-and-set: a dispatch pass that moved the rollout meanwhile
  // makes us read it again (a few times at most: passes are seconds apart).
  for (int tries = 0;; ++tries) {
    auto task = store_.GetTask(task_id);
    if (!task.ok()) return task.status();
    if (!task->spec.rollout || !task->rollout) {
      return Status::FailedPrecondition("task " + task_id +
                                        " has no rollout (no `rollout:` block in its spec)");
    }
    auto change = OperatorRolloutChange(*task->spec.rollout, *task->rollout, TallyRollout(*task),
                                        action, who, reason);
    if (!change.ok()) return change.status();
    Status st = store_.UpdateRollout(*change);
    if (st.code() == StatusCode::kFailedPrecondition && tries < 5) continue;
    if (!st.ok()) return st;
    rollouts_kicked_ = true;
    task_watches_.Notify(task_id);
    Kick();
    auto after = store_.GetTask(task_id);
    if (!after.ok()) return after.status();
    return *after->rollout;
  }
}

}  // namespace apollo::orchestrator
