// Task roll-up and dependency release (part of row_ops.h).
#include <vector>

#include "store/sqlite/row_ops.h"

namespace apollo::store::sqlite {
namespace {

struct TaskRollup {
  TaskState old_status = TaskState::kPending;
  bool was_settled = false;
  TaskState status = TaskState::kPending;
  bool settled = false;
};

Result<TaskRollup> ComputeRollup(WriteTxn& txn, int64_t task_ref) {
  TaskRollup r;
  int max_retries = 0;
  {
    Result<Stmt*> st = txn.db().Prepare(
        "SELECT status, settled_at IS NOT NULL, max_retries FROM tasks WHERE task_ref = ?1");
    if (!st.ok()) return st.status();
    StmtRef s(*st);
    s->Bind(1, task_ref);
    Result<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Internal("roll-up of a missing task");
    r.old_status = static_cast<TaskState>(s->Int(0));
    r.was_settled = s->Int(1) != 0;
    max_retries = static_cast<int>(s->Int(2));
  }
  Result<Stmt*> st = txn.db().Prepare("SELECT state, retries FROM task_nodes WHERE task_ref = ?1");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, task_ref);
  std::vector<TaskState> states;
  bool settled = true;
  for (;;) {
    Result<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    auto state = static_cast<TaskState>(s->Int(0));
    states.push_back(state);
    settled = settled && IsSettled(state, s->Int(1) >= max_retries);
  }
  r.status = RollUp(states);
  r.settled = settled && !states.empty();
  return r;
}

// Every dependency of `task_ref` has rolled up to SUCCEEDED.
Result<bool> DepsSucceeded(WriteTxn& txn, int64_t task_ref) {
  Result<Stmt*> st = txn.db().Prepare(
      "SELECT count(*) FROM task_deps d JOIN tasks t ON t.task_ref = d.dep_ref "
      "WHERE d.task_ref = ?1 AND t.status <> ?2");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, task_ref).Bind(2, static_cast<int64_t>(TaskState::kSucceeded));
  Result<bool> row = s->Step();
  if (!row.ok()) return row.status();
  return s->Int(0) == 0;
}

Status SetPendingDue(WriteTxn& txn, int64_t task_ref, DueKind kind, std::string_view reason) {
  Result<Stmt*> st = txn.db().Prepare(
      "UPDATE task_nodes SET due_kind = ?2, due_at = ?3, blocked_reason = ?4 "
      "WHERE task_ref = ?1 AND state = ?5");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, task_ref).Bind(2, static_cast<int64_t>(kind)).Bind(3, txn.now_us());
  s->Bind(4, reason).Bind(5, static_cast<int64_t>(TaskState::kPending));
  return s->Run();
}

// `task_ref` just settled as `status`: release or fail its dependents.
Status ReleaseDependents(WriteTxn& txn, int64_t task_ref, TaskState status) {
  std::vector<int64_t> dependents;
  {
    Result<Stmt*> st = txn.db().Prepare("SELECT task_ref FROM task_deps WHERE dep_ref = ?1");
    if (!st.ok()) return st.status();
    StmtRef s(*st);
    s->Bind(1, task_ref);
    for (;;) {
      Result<bool> row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      dependents.push_back(s->Int(0));
    }
  }
  for (int64_t dep : dependents) {
    if (status != TaskState::kSucceeded) {
      APOLLO_RETURN_IF_ERROR(SetPendingDue(
          txn, dep, DueKind::kUpstreamFailed,
          "upstream_failed (" + std::string(TaskStateName(status)) + ")"));
      continue;
    }
    Result<bool> ready = DepsSucceeded(txn, dep);
    if (!ready.ok()) return ready.status();
    if (*ready) APOLLO_RETURN_IF_ERROR(SetPendingDue(txn, dep, DueKind::kDispatch, ""));
  }
  return Status::Ok();
}

// Stores a changed roll-up and releases dependents when it just settled.
Status WriteRollup(WriteTxn& txn, int64_t ref, const TaskRollup& r) {
  if (r.status == r.old_status && r.settled == r.was_settled) return Status::Ok();
  Result<Stmt*> st = txn.db().Prepare(
      "UPDATE tasks SET status = ?2, updated_at = ?3, "
      "settled_at = CASE WHEN ?4 THEN COALESCE(settled_at, ?3) ELSE NULL END "
      "WHERE task_ref = ?1");
  if (!st.ok()) return st.status();
  {
    StmtRef s(*st);
    s->Bind(1, ref).Bind(2, static_cast<int64_t>(r.status)).Bind(3, txn.now_us());
    s->Bind(4, static_cast<int64_t>(r.settled ? 1 : 0));
    APOLLO_RETURN_IF_ERROR(s->Run());
  }
  if (r.settled && !r.was_settled) return ReleaseDependents(txn, ref, r.status);
  return Status::Ok();
}

}  // namespace

Status NoteRowChanged(WriteTxn& txn, const RowState& row, TaskState to, int retries,
                      std::set<int64_t>& touched) {
  if (row.node_count != 1) {
    touched.insert(row.task_ref);
    return Status::Ok();
  }
  TaskRollup r;
  r.old_status = row.task_status;
  r.was_settled = row.task_settled;
  TaskState states[] = {to};
  r.status = RollUp(states);
  r.settled = IsSettled(to, retries >= row.max_retries);
  return WriteRollup(txn, row.task_ref, r);
}

Status RecomputeTasks(WriteTxn& txn, const std::set<int64_t>& task_refs) {
  for (int64_t ref : task_refs) {
    Result<TaskRollup> r = ComputeRollup(txn, ref);
    if (!r.ok()) return r.status();
    APOLLO_RETURN_IF_ERROR(WriteRollup(txn, ref, *r));
  }
  return Status::Ok();
}

}  // namespace apollo::store::sqlite
