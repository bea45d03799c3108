// Task roll-up and dependency release (part of rows.h), set-based.
#include <algorithm>
#include <map>
#include <vector>

#include "store/postgres/rows.h"

namespace apollo::store::postgres {
namespace {

void SetPendingDue(WriteTxn& txn, int64_t task_ref, DueKind kind, const std::string& reason) {
  txn.Exec(
      "UPDATE task_nodes SET due_kind = $2, due_at = $3, blocked_reason = $4 "
      "WHERE task_ref = $1 AND state = $5",
      task_ref, static_cast<int>(kind), txn.now_us(), reason,
      static_cast<int>(TaskState::kPending));
}

// `settled` (task_ref -> status) just settled: release or fail dependents.
void ReleaseDependents(WriteTxn& txn, const std::map<int64_t, TaskState>& settled,
                       std::vector<std::pair<int64_t, int64_t>> dependents) {
  std::sort(dependents.begin(), dependents.end());  // the SQLite backend's order
  for (const auto& [dep_ref, dependent] : dependents) {
    auto it = settled.find(dep_ref);
    if (it == settled.end()) continue;
    TaskState status = it->second;
    if (status != TaskState::kSucceeded) {
      SetPendingDue(txn, dependent, DueKind::kUpstreamFailed,
                    "upstream_failed (" + std::string(TaskStateName(status)) + ")");
      continue;
    }
    pqxx::result open = txn.Exec(
        "SELECT count(*) FROM task_deps d JOIN task_status t ON t.task_ref = d.dep_ref "
        "WHERE d.task_ref = $1 AND t.status <> $2",
        dependent, static_cast<int>(TaskState::kSucceeded));
    if (open[0][0].as<int64_t>() == 0) SetPendingDue(txn, dependent, DueKind::kDispatch, "");
  }
}

}  // namespace

Status RecomputeTasks(WriteTxn& txn, const std::set<int64_t>& touched, const TaskMap& tasks,
                      const TouchedFacts& facts) {
  PgArray u_ref, u_status, u_settled;
  std::map<int64_t, TaskState> newly_settled;
  for (int64_t ref : touched) {
    auto t = tasks.find(ref);
    auto nodes = facts.states.find(ref);
    if (t == tasks.end() || nodes == facts.states.end()) {
      return Status::Internal("roll-up of a task that was not locked");
    }
    std::vector<TaskState> states;
    bool settled = true;
    for (const auto& [node_ref, state_retries] : nodes->second) {
      states.push_back(state_retries.first);
      settled = settled &&
                IsSettled(state_retries.first, state_retries.second >= t->second.max_retries);
    }
    TaskState status = RollUp(states);
    settled = settled && !states.empty();
    if (status == t->second.status && settled == t->second.settled) continue;
    u_ref.Add(ref), u_status.Add(static_cast<int64_t>(status)), u_settled.Add(settled);
    if (settled && !t->second.settled) newly_settled[ref] = status;
  }
  if (u_ref.empty()) return Status::Ok();
  txn.Exec(
      "UPDATE task_status t SET status = u.status, updated_at = $4, "
      "settled_at = CASE WHEN u.settled THEN COALESCE(t.settled_at, $4) ELSE NULL END "
      "FROM unnest($1::bigint[], $2::int[], $3::bool[]) AS u(task_ref, status, settled) "
      "WHERE t.task_ref = u.task_ref",
      u_ref.str(), u_status.str(), u_settled.str(), txn.now_us());
  if (!newly_settled.empty()) ReleaseDependents(txn, newly_settled, facts.dependents);
  return Status::Ok();
}

}  // namespace apollo::store::postgres
