// Task roll-up and dependency release (part of rows.h). Decided here, from
// the states the op holds; written with statements queued behind the op's
// row writes, so neither costs a round trip of its own.
#include <map>
#include <vector>

#include "store/engine/rows.h"

namespace apollo::store::engine {
namespace {

constexpr sql::Column kStatusCols[] = {
    {"task_ref", sql::Type::kInt}, {"status", sql::Type::kInt}, {"settled", sql::Type::kBool}};
constexpr sql::Statement kWriteStatus{
    "UPDATE task_status AS t SET status = u.status, updated_at = $1, "
    "settled_at = CASE WHEN u.settled THEN COALESCE(t.settled_at, $1) ELSE NULL END "
    "FROM @rows WHERE t.task_ref = u.task_ref",
    kStatusCols};

// The PENDING rows of every task depending on a task that settled without
// success now wait for nothing: they are upstream_failed.
constexpr sql::Column kFailedCols[] = {{"task_ref", sql::Type::kInt}, {"reason", sql::Type::kText}};
constexpr sql::Statement kFailDependents{
    "UPDATE task_nodes AS tn SET due_kind = $1, due_at = $2, blocked_reason = u.reason "
    "FROM task_deps d, @rows "
    "WHERE d.dep_ref = u.task_ref AND tn.task_ref = d.task_ref AND tn.state = $3",
    kFailedCols};

// The PENDING rows of every task depending on a task that SUCCEEDED become
// due once all their dependencies have (statuses as written just before) —
// unless another gate holds them (gates.h): they then say which.
constexpr sql::Column kSucceededCols[] = {{"task_ref", sql::Type::kInt}};
#define APOLLO_GATED "(s0.held_by <> '' OR tn.batch > s0.open_batch)"
constexpr sql::Statement kReleaseDependents{
    "UPDATE task_nodes AS tn SET "
    "due_kind = CASE WHEN " APOLLO_GATED
    " THEN 0 ELSE $1 END, "
    "due_at = CASE WHEN " APOLLO_GATED
    " THEN NULL ELSE $2 END, "
    "blocked_reason = CASE WHEN s0.held_by <> '' THEN 'held_by ' || s0.held_by "
    "WHEN tn.batch > s0.open_batch THEN 'rollout_waiting batch ' || tn.batch ELSE '' END, "
    "start_deadline = CASE WHEN " APOLLO_GATED
    " THEN NULL "
    "WHEN s0.start_timeout_us > 0 THEN $2 + s0.start_timeout_us END "
    "FROM task_deps d, task_status s0, @rows "
    "WHERE d.dep_ref = u.task_ref AND tn.task_ref = d.task_ref AND s0.task_ref = tn.task_ref "
    "AND tn.state = $3 "
    "AND NOT EXISTS (SELECT 1 FROM task_deps d2 JOIN task_status s ON s.task_ref = d2.dep_ref "
    "WHERE d2.task_ref = tn.task_ref AND s.status <> $4)",
    kSucceededCols};
#undef APOLLO_GATED

}  // namespace

Status RecomputeTasks(WriteTxn& txn, const std::vector<int64_t>& touched, const TaskMap& tasks,
                      const TaskStates& states, Rollups* out) {
  sql::RowSet changed(kWriteStatus), failed(kFailDependents), succeeded(kReleaseDependents);
  changed.Reserve(touched.size());
  auto next = states.begin();
  std::vector<TaskState> node_states;
  for (int64_t ref : touched) {  // sorted, like states
    auto t = tasks.find(ref);
    while (next != states.end() && next->task_ref < ref) ++next;
    if (t == tasks.end() || next == states.end() || next->task_ref != ref) {
      return Status::Internal("roll-up of a task that was not locked");
    }
    node_states.clear();
    bool settled = true;
    for (; next != states.end() && next->task_ref == ref; ++next) {
      node_states.push_back(next->state);
      settled = settled &&
                IsSettled(next->state, next->retries >= t->second.max_retries || next->permanent);
    }
    TaskState status = RollUp(node_states);
    const bool same = status == t->second.status && settled == t->second.settled;
    if (out) (*out)[ref] = {status, static_cast<int>(node_states.size()), !same};
    if (same) continue;
    changed.Add(ref, status, settled);
    if (!settled || t->second.settled || t->second.dependents == 0) continue;
    if (status == TaskState::kSucceeded) {
      succeeded.Add(ref);
    } else {
      failed.Add(ref, "upstream_failed (" + std::string(TaskStateName(status)) + ")");
    }
  }
  sql::Params now(txn.now_us());
  txn.Exec(kWriteStatus, now, &changed);
  sql::Params due(DueKind::kUpstreamFailed, txn.now_us(), TaskState::kPending);
  txn.Exec(kFailDependents, due, &failed);
  sql::Params ready(DueKind::kDispatch, txn.now_us(), TaskState::kPending, TaskState::kSucceeded);
  txn.Exec(kReleaseDependents, ready, &succeeded);
  return Status::Ok();
}

}  // namespace apollo::store::engine
