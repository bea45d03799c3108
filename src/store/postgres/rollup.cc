// Task roll-up and dependency release (part of rows.h), set-based.
#include <map>
#include <vector>

#include "store/postgres/rows.h"

namespace apollo::store::postgres {
namespace {

struct TaskInfo {
  TaskState old_status = TaskState::kPending;
  bool was_settled = false;
  int max_retries = 0;
  std::vector<TaskState> states;
  bool settled = true;
};

void SetPendingDue(WriteTxn& txn, int64_t task_ref, DueKind kind, const std::string& reason) {
  txn.Exec(
      "UPDATE task_nodes SET due_kind = $2, due_at = $3, blocked_reason = $4 "
      "WHERE task_ref = $1 AND state = $5",
      task_ref, static_cast<int>(kind), txn.now_us(), reason,
      static_cast<int>(TaskState::kPending));
}

// `settled` (task_ref -> status) just settled: release or fail dependents.
void ReleaseDependents(WriteTxn& txn, const std::map<int64_t, TaskState>& settled) {
  PgArray refs;
  for (const auto& [ref, status] : settled) refs.Add(ref);
  pqxx::result deps = txn.Exec(
      "SELECT dep_ref, task_ref FROM task_deps WHERE dep_ref = ANY($1::bigint[]) "
      "ORDER BY dep_ref, task_ref",
      refs.str());
  for (const auto& d : deps) {
    TaskState status = settled.at(d[0].as<int64_t>());
    int64_t dependent = d[1].as<int64_t>();
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

Status RecomputeTasks(WriteTxn& txn, const std::set<int64_t>& task_refs) {
  if (task_refs.empty()) return Status::Ok();
  PgArray refs;
  for (int64_t r : task_refs) refs.Add(r);
  std::map<int64_t, TaskInfo> tasks;
  // Lock the task rows first (in order): a replica updating another node of
  // the same task waits here, then sees our node states and we see its.
  pqxx::result t = txn.Exec(
      "SELECT s.task_ref, s.status, s.settled_at IS NOT NULL, t.max_retries "
      "FROM task_status s JOIN tasks t ON t.task_ref = s.task_ref "
      "WHERE s.task_ref = ANY($1::bigint[]) ORDER BY s.task_ref FOR UPDATE OF s",
      refs.str());
  for (const auto& row : t) {
    TaskInfo& info = tasks[row[0].as<int64_t>()];
    info.old_status = static_cast<TaskState>(row[1].as<int>());
    info.was_settled = row[2].as<bool>();
    info.max_retries = row[3].as<int>();
  }
  if (tasks.size() != task_refs.size()) return Status::Internal("roll-up of a missing task");
  pqxx::result n = txn.Exec(
      "SELECT task_ref, state, retries FROM task_nodes WHERE task_ref = ANY($1::bigint[])",
      refs.str());
  for (const auto& row : n) {
    TaskInfo& info = tasks.at(row[0].as<int64_t>());
    auto state = static_cast<TaskState>(row[1].as<int>());
    info.states.push_back(state);
    info.settled = info.settled && IsSettled(state, row[2].as<int>() >= info.max_retries);
  }
  PgArray u_ref, u_status, u_settled;
  std::map<int64_t, TaskState> newly_settled;
  for (auto& [ref, info] : tasks) {
    TaskState status = RollUp(info.states);
    bool settled = info.settled && !info.states.empty();
    if (status == info.old_status && settled == info.was_settled) continue;
    u_ref.Add(ref), u_status.Add(static_cast<int64_t>(status)), u_settled.Add(settled);
    if (settled && !info.was_settled) newly_settled[ref] = status;
  }
  if (u_ref.empty()) return Status::Ok();
  txn.Exec(
      "UPDATE task_status t SET status = u.status, updated_at = $4, "
      "settled_at = CASE WHEN u.settled THEN COALESCE(t.settled_at, $4) ELSE NULL END "
      "FROM unnest($1::bigint[], $2::int[], $3::bool[]) AS u(task_ref, status, settled) "
      "WHERE t.task_ref = u.task_ref",
      u_ref.str(), u_status.str(), u_settled.str(), txn.now_us());
  if (!newly_settled.empty()) ReleaseDependents(txn, newly_settled);
  return Status::Ok();
}

}  // namespace apollo::store::postgres
