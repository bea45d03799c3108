#include "orchestrator/reconciler.h"

#include <deque>
#include <map>

namespace apollo::orchestrator {

std::string_view DriftActionName(DriftAction a) {
  switch (a) {
    case DriftAction::kRepair: return "repair";
    case DriftAction::kRedispatch: return "redispatch";
    case DriftAction::kFailLost: return "fail_lost";
    case DriftAction::kStoreAhead: return "store_ahead";
    case DriftAction::kUnknownToStore: return "alert";
    case DriftAction::kInFlight: return "in_flight";
  }
  return "unknown";
}

std::vector<TaskState> LegalPath(TaskState from, TaskState to) {
  if (from == to) return {};
  // Breadth-first over the state machine: 8 states, so trivially cheap.
  std::map<TaskState, TaskState> parent;
  std::deque<TaskState> queue{from};
  parent[from] = from;
  while (!queue.empty()) {
    TaskState s = queue.front();
    queue.pop_front();
    for (TaskState next : kAllTaskStates) {
      // An agent's state never takes the center's not-started edge, and
      // never enters RETRYING: only the retry policy grants a retry (a path
      // TIMEOUT -> RETRYING -> RUNNING would undo the center's judgement).
      if (parent.count(next) || !IsTransitionAllowed(s, next) || IsNotStartedEdge(s, next) ||
          next == TaskState::kRetrying) {
        continue;
      }
      parent[next] = s;
      if (next == to) {
        std::vector<TaskState> path{to};
        for (TaskState at = s; at != from; at = parent[at]) path.insert(path.begin(), at);
        return path;
      }
      queue.push_back(next);
    }
  }
  return {};
}

std::vector<DriftItem> FindDrift(const NodeSnapshot& snapshot,
                                 const std::vector<store::NodeRow>& rows, uint64_t stored_hwm) {
  std::map<std::string, const store::NodeRow*> by_task;
  for (const auto& r : rows) by_task[r.task_id] = &r;
  std::vector<DriftItem> drift;
  std::map<std::string, bool> seen;
  for (const AgentTaskView& v : snapshot.tasks) {
    seen[v.task_id] = true;
    DriftItem d;
    d.node_id = snapshot.node_id;
    d.task_id = v.task_id;
    d.attempt = v.attempt;
    d.agent_state = v.status;
    auto it = by_task.find(v.task_id);
    const bool finished_here = v.status == TaskState::kSucceeded ||
                               v.status == TaskState::kFailed || v.status == TaskState::kTimeout ||
                               v.status == TaskState::kCancelled;
    if (it == by_task.end() && finished_here && v.last_seq <= stored_hwm) {
      // Finished here and every event of it is stored: the store had this
      // task and retention has purged it since. Nothing to repair.
      continue;
    }
    if (it == by_task.end()) {
      d.action = DriftAction::kUnknownToStore;
      d.detail = "the agent knows this task, the store does not";
      drift.push_back(std::move(d));
      continue;
    }
    const store::NodeRow& row = *it->second;
    d.store_state = row.state;
    d.version = row.version;
    if (v.attempt < row.attempt) continue;  // an old attempt: fenced, nothing to compare
    if (v.attempt > row.attempt) {
      d.action = DriftAction::kUnknownToStore;
      d.detail = "the agent runs attempt " + std::to_string(v.attempt) +
                 " but the store dispatched only up to " + std::to_string(row.attempt);
      drift.push_back(std::move(d));
      continue;
    }
    if (v.status == row.state) continue;
    if (row.state == TaskState::kRetrying && row.due_kind == store::DueKind::kRetry) {
      // The center judged this attempt (timed out or failed) and granted a
      // retry not sent yet: the agent's word on it is fenced, like its
      // events; the retry's dispatch supersedes the run.
      d.action = DriftAction::kStoreAhead;
      d.detail = "attempt " + std::to_string(row.attempt) +
                 " was judged and its retry granted; the store wins";
      drift.push_back(std::move(d));
      continue;
    }
    d.path = LegalPath(row.state, v.status);
    if (d.path.empty()) {
      d.action = DriftAction::kStoreAhead;
      d.detail = "the store is ahead; it wins";
    } else if (v.last_seq > stored_hwm) {
      d.action = DriftAction::kInFlight;
      d.detail = "the agent's events up to seq " + std::to_string(v.last_seq) +
                 " are not all stored yet; they will arrive";
      d.path.clear();
    } else {
      d.action = DriftAction::kRepair;
      d.detail = "the agent reports " + std::string(TaskStateName(v.status)) +
                 " but its events never reached the store";
    }
    drift.push_back(std::move(d));
  }
  if (!snapshot.complete) return drift;
  for (const auto& row : rows) {
    if (seen.count(row.task_id) || row.attempt == 0) continue;
    if (row.state != TaskState::kDispatched && row.state != TaskState::kRunning) continue;
    DriftItem d;
    d.node_id = snapshot.node_id;
    d.task_id = row.task_id;
    d.attempt = row.attempt;
    d.store_state = row.state;
    d.version = row.version;
    if (row.state == TaskState::kDispatched) {
      d.action = DriftAction::kRedispatch;
      d.detail = "the agent never received this intent; sending it again";
    } else {
      d.action = DriftAction::kFailLost;
      d.path = {TaskState::kFailed};
      d.detail = "the agent has no record of this run (its log was lost)";
    }
    drift.push_back(std::move(d));
  }
  return drift;
}

Result<int> ApplyDrift(store::StateStore& store, const std::vector<DriftItem>& drift,
                       const Clock& clock) {
  std::vector<store::TransitionRequest> requests;
  for (const DriftItem& d : drift) {
    int64_t version = d.version;
    auto base = [&] {
      store::TransitionRequest r;
      r.task_id = d.task_id;
      r.node_id = d.node_id;
      r.cause = store::Cause::kReconcile;
      r.expected_version = version;
      r.detail = "reconcile: " + d.detail;
      return r;
    };
    switch (d.action) {
      case DriftAction::kRepair:
      case DriftAction::kFailLost:
        for (TaskState to : d.path) {
          store::TransitionRequest r = base();
          r.to = to;
          requests.push_back(std::move(r));
          ++version;  // each applied step bumps the row's version by one
        }
        break;
      case DriftAction::kRedispatch: {
        store::TransitionRequest r = base();
        r.ack_deadline = clock.Now();  // due now: the dispatcher sends it again
        requests.push_back(std::move(r));
        break;
      }
      default: break;
    }
  }
  if (requests.empty()) return 0;
  auto outcomes = store.Transition(requests);
  if (!outcomes.ok()) return outcomes.status();
  int changed = 0;
  for (const auto& o : *outcomes) changed += o.outcome == store::Outcome::kApplied ? 1 : 0;
  return changed;
}

Result<int> RaiseDriftAlerts(store::StateStore& store, const std::vector<DriftItem>& drift) {
  int written = 0;
  for (const DriftItem& d : drift) {
    if (d.action != DriftAction::kUnknownToStore) continue;
    store::AlertRow a;
    a.kind = "unknown_to_store";
    a.task_id = d.task_id;
    a.node_id = d.node_id;
    a.from = d.store_state;
    a.to = d.agent_state;
    a.detail = "node " + d.node_id + " reports task " + d.task_id + " (attempt " +
               std::to_string(d.attempt) + ", " +
               (d.agent_state ? std::string(TaskStateName(*d.agent_state)) : "?") +
               "): " + d.detail + "; nothing was changed";
    auto id = store.AddAlert(a);
    if (!id.ok()) return id.status();
    ++written;
  }
  return written;
}

}  // namespace apollo::orchestrator
