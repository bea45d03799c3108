// Selectors that follow the fleet: a node that comes to match a following
// task's selector gets a row of it, once (the row's key is (task, node)).
#include <nlohmann/json.hpp>
#include <vector>

#include "store/engine/gates.h"
#include "store/engine/nodes.h"
#include "store/engine/queries.h"
#include "store/engine/rows.h"
#include "store/engine/write_paths.h"

namespace apollo::store::engine {
namespace {

constexpr sql::Statement kFollowing{
    "SELECT t.task_id, t.spec, s.start_timeout_us FROM task_status s "
    "JOIN tasks t ON t.task_ref = s.task_ref WHERE s.follow ORDER BY s.task_ref"};
constexpr sql::Statement kFollowFacts{
    "SELECT s.follow, t.priority, s.status FROM task_status s "
    "JOIN tasks t ON t.task_ref = s.task_ref WHERE s.task_ref = $1"};
constexpr sql::Statement kHasRow{
    "SELECT count(*) FROM task_nodes WHERE task_ref = $1 AND node_ref = $2"};
constexpr sql::Statement kInsertRow{
    "INSERT INTO task_nodes(task_ref, node_ref, state, version, attempt, retries, created_at, "
    "updated_at, due_kind, due_at, blocked_reason, start_deadline, priority, batch) "
    "VALUES ($1, $2, $3, 1, 0, 0, $4, $4, 0, NULL, '', NULL, $5, 0)"};
constexpr sql::Statement kStates{"SELECT state FROM task_nodes WHERE task_ref = $1"};
constexpr sql::Statement kGrow{
    "UPDATE task_status SET status = $2, node_count = node_count + 1, settled_at = NULL, "
    "updated_at = $3 WHERE task_ref = $1"};
constexpr sql::Statement kStop{
    "UPDATE task_status SET follow = false WHERE task_ref = (SELECT task_ref FROM tasks "
    "WHERE task_id = $1)"};

}  // namespace

Result<std::vector<FollowingTask>> QueryFollowing(sql::Conn& db) {
  Result<sql::Rows> r = db.Query(kFollowing);
  if (!r.ok()) return r.status();
  std::vector<FollowingTask> out;
  for (size_t i = 0; i < r->size(); ++i) {
    Result<TaskSpec> spec = SpecFromJson(nlohmann::json::parse(r->Text(i, 1), nullptr, false));
    if (!spec.ok()) continue;  // unreadable: GetTask says why
    out.push_back({r->TakeText(i, 0), spec->target_selector,
                   std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::microseconds(r->Int(i, 2)))});
  }
  return out;
}

Result<bool> WriteFollowRow(WriteTxn& txn, const std::string& task_id, const std::string& node_id,
                            const std::string& detail) {
  Result<int64_t> task = FindTask(txn, task_id);
  if (!task.ok()) return task.status();
  Result<sql::Rows> facts = txn.Query(kFollowFacts, sql::Params(*task));
  if (!facts.ok()) return facts.status();
  if (facts->empty() || !facts->Bool(0, 0) ||
      static_cast<TaskState>(facts->Int(0, 2)) == TaskState::kCancelled) {
    return Status::FailedPrecondition("task " + task_id + " does not follow the fleet");
  }
  const int64_t priority = facts->Int(0, 1);
  Result<NodeFacts> nodes = EnsureNodes(txn, {node_id});
  if (!nodes.ok()) return nodes.status();
  const int64_t node_ref = nodes->at(node_id).ref;
  Result<sql::Rows> has = txn.Query(kHasRow, sql::Params(*task, node_ref));
  if (!has.ok()) return has.status();
  if (has->Int(0, 0) > 0) return false;  // it has the task already: never twice
  txn.Exec(kInsertRow, sql::Params(*task, node_ref, TaskState::kPending, txn.now_us(), priority));
  WriteSet ws(1);
  APOLLO_RETURN_IF_ERROR(ws.AddHistory(txn, {*task,
                                             node_ref,
                                             Cause::kFollow,
                                             Outcome::kApplied,
                                             std::nullopt,
                                             std::nullopt,
                                             0,
                                             TaskState::kPending,
                                             TaskState::kPending,
                                             1,
                                             detail,
                                             {}}));
  ws.FlushLog(txn);
  Result<sql::Rows> states = txn.Query(kStates, sql::Params(*task));
  if (!states.ok()) return states.status();
  std::vector<TaskState> all;
  for (size_t i = 0; i < states->size(); ++i)
    all.push_back(static_cast<TaskState>(states->Int(i, 0)));
  txn.Exec(kGrow, sql::Params(*task, RollUp(all), txn.now_us()));
  Result<int> n = RegateTask(txn, *task, GateMove{}, Cause::kFollow, "joined");
  if (!n.ok()) return n.status();
  return true;
}

Status WriteStopFollowing(WriteTxn& txn, const std::string& task_id) {
  txn.Exec(kStop, sql::Params(task_id));
  return Status::Ok();
}

}  // namespace apollo::store::engine
