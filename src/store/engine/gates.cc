#include "store/engine/gates.h"

#include <optional>
#include <vector>

#include "store/engine/rows.h"

namespace apollo::store::engine {
namespace {

constexpr sql::Statement kFindTask{"SELECT task_ref FROM tasks WHERE task_id = $1"};
constexpr sql::Statement kMoveBatch{"UPDATE task_status SET open_batch = $2 WHERE task_ref = $1"};
constexpr sql::Statement kMoveHold{"UPDATE task_status SET held_by = $2 WHERE task_ref = $1"};

constexpr sql::Statement kGateFacts{
    "SELECT s.open_batch, s.held_by, s.start_timeout_us FROM task_status s WHERE s.task_ref = $1"};
// Its dependencies that have not SUCCEEDED, and whether each settled.
constexpr sql::Statement kOpenDeps{
    "SELECT t.task_id, s.settled_at IS NOT NULL FROM task_deps d "
    "JOIN task_status s ON s.task_ref = d.dep_ref JOIN tasks t ON t.task_ref = d.dep_ref "
    "WHERE d.task_ref = $1 AND s.status <> $2 ORDER BY t.task_id"};
constexpr sql::Statement kPendingRows{
    "SELECT tn.node_ref, tn.version, tn.batch, tn.due_kind, tn.due_at, tn.start_deadline, "
    "tn.blocked_reason, tn.attempt FROM task_nodes tn "
    "WHERE tn.task_ref = $1 AND tn.state = $2 AND tn.due_kind IN ($3, $4) "
    "ORDER BY tn.node_ref /*@pg FOR UPDATE OF tn*/"};

constexpr sql::Column kRegateCols[] = {
    {"node_ref", sql::Type::kInt}, {"version", sql::Type::kInt},
    {"due_kind", sql::Type::kInt}, {"due_at", sql::Type::kInt},
    {"reason", sql::Type::kText},  {"start_deadline", sql::Type::kInt}};
constexpr sql::Statement kRegate{
    "UPDATE task_nodes AS tn SET due_kind = u.due_kind, due_at = u.due_at, "
    "blocked_reason = u.reason, start_deadline = u.start_deadline, version = tn.version + 1, "
    "updated_at = $2 FROM @rows WHERE tn.task_ref = $1 AND tn.node_ref = u.node_ref "
    "AND tn.version = u.version",
    kRegateCols};

}  // namespace

std::string RolloutWaitReason(int batch) {
  return "rollout_waiting batch " + std::to_string(batch);
}

Status AddTaskHistory(WriteTxn& txn, int64_t task_ref, Cause cause, TaskState status,
                      const std::string& detail) {
  WriteSet ws(1);
  APOLLO_RETURN_IF_ERROR(ws.AddHistory(txn, {task_ref,
                                             0,
                                             cause,
                                             Outcome::kApplied,
                                             std::nullopt,
                                             std::nullopt,
                                             0,
                                             status,
                                             status,
                                             0,
                                             detail,
                                             {}}));
  ws.FlushLog(txn);
  return Status::Ok();
}

Result<int64_t> FindTask(WriteTxn& txn, std::string_view task_id) {
  Result<sql::Rows> r = txn.Query(kFindTask, sql::Params(task_id));
  if (!r.ok()) return r.status();
  if (r->empty()) return Status::NotFound("no task " + std::string(task_id));
  return r->Int(0, 0);
}

Result<int> RegateTask(WriteTxn& txn, int64_t task_ref, const GateMove& move, Cause cause,
                       const std::string& detail) {
  Result<sql::Rows> rows = txn.Query(
      kPendingRows, sql::Params(task_ref, TaskState::kPending, DueKind::kNone, DueKind::kDispatch));
  if (!rows.ok()) return rows.status();
  if (move.open_batch) txn.Exec(kMoveBatch, sql::Params(task_ref, *move.open_batch));
  if (move.held_by) txn.Exec(kMoveHold, sql::Params(task_ref, *move.held_by));
  Result<sql::Rows> facts = txn.Query(kGateFacts, sql::Params(task_ref));
  if (!facts.ok()) return facts.status();
  if (facts->empty()) return Status::Internal("regate of a task without status");
  const int open_batch = static_cast<int>(facts->Int(0, 0));
  const std::string held_by = facts->TakeText(0, 1);
  const int64_t start_timeout_us = facts->Int(0, 2);
  Result<sql::Rows> deps = txn.Query(kOpenDeps, sql::Params(task_ref, TaskState::kSucceeded));
  if (!deps.ok()) return deps.status();
  std::string pending;
  bool failed = false;
  for (size_t i = 0; i < deps->size(); ++i) {
    pending += (pending.empty() ? "" : ",") + deps->TakeText(i, 0);
    failed = failed || deps->Bool(i, 1);
  }
  sql::RowSet changed(kRegate);
  WriteSet ws(rows->size());
  int n = 0;
  for (size_t i = 0; i < rows->size(); ++i) {
    const int64_t node_ref = rows->Int(i, 0);
    const int64_t version = rows->Int(i, 1);
    const int batch = static_cast<int>(rows->Int(i, 2));
    const auto kind = static_cast<DueKind>(rows->Int(i, 3));
    const std::string reason = rows->TakeText(i, 6);
    DueKind to_kind = DueKind::kNone;
    std::optional<int64_t> due_at, deadline;
    std::string to_reason;
    if (failed) {
      to_kind = DueKind::kUpstreamFailed;  // the dispatcher cancels it
      due_at = txn.now_us();
      to_reason = "upstream_failed";
    } else if (!pending.empty()) {
      to_reason = "deps_pending [" + pending + "]";
    } else if (!held_by.empty()) {
      to_reason = "held_by " + held_by;
    } else if (batch > open_batch) {
      to_reason = RolloutWaitReason(batch);
    } else {
      to_kind = DueKind::kDispatch;
      if (kind == DueKind::kDispatch) {  // already due: keeps its place and deadline
        due_at = rows->OptInt(i, 4);
        deadline = rows->OptInt(i, 5);
      } else {
        due_at = txn.now_us();
        if (start_timeout_us > 0) deadline = txn.now_us() + start_timeout_us;
      }
    }
    if (to_kind == kind && to_reason == reason) continue;
    changed.Add(node_ref, version, to_kind, due_at, to_reason, deadline);
    ++n;
    std::string line = detail;
    line += to_kind == DueKind::kDispatch         ? ": may start now"
            : to_kind == DueKind::kUpstreamFailed ? ": a dependency ended without success"
                                                  : ": waits, " + to_reason;
    APOLLO_RETURN_IF_ERROR(ws.AddHistory(txn, {task_ref,
                                               node_ref,
                                               cause,
                                               Outcome::kApplied,
                                               std::nullopt,
                                               std::nullopt,
                                               static_cast<uint32_t>(rows->Int(i, 7)),
                                               TaskState::kPending,
                                               TaskState::kPending,
                                               version + 1,
                                               line,
                                               {}}));
  }
  if (n == 0) return 0;
  txn.ExecExpect(kRegate, sql::Params(task_ref, txn.now_us()), &changed, n, "regate task rows");
  ws.FlushLog(txn);
  return n;
}

}  // namespace apollo::store::engine
