// An operator's changes to the DAG at run time, for tasks not started yet:
// dependencies added or removed (cycles refused with the cycle named), and
// holds. Each moves a gate and lets RegateTask (gates.h) re-decide the rows.
#include <map>
#include <set>
#include <vector>

#include "store/engine/gates.h"
#include "store/engine/write_paths.h"

namespace apollo::store::engine {
namespace {

// DAG changes one at a time (PostgreSQL, several writers): two changes
// that together close a cycle must not both pass the check.
constexpr sql::Statement kDagLock{"/*@pg SELECT pg_advisory_xact_lock(7111970)*/"};
constexpr sql::Statement kStarted{
    "SELECT state, count(*) FROM task_nodes WHERE task_ref = $1 AND state <> $2 GROUP BY state "
    "ORDER BY state"};
constexpr sql::Statement kWaiting{
    "SELECT count(*) FROM task_nodes WHERE task_ref = $1 AND state = $2"};
constexpr sql::Statement kHeld{
    "SELECT held_by, status FROM task_status WHERE task_ref = $1 /*@pg FOR UPDATE*/"};
constexpr sql::Statement kDepFacts{
    "SELECT status, settled_at IS NOT NULL FROM task_status WHERE task_ref = $1"};
// Every dependency edge reachable from $1 (what it depends on, transitively).
constexpr sql::Statement kReachable{
    "WITH RECURSIVE reach(ref) AS (SELECT CAST($1 AS BIGINT) UNION "
    "SELECT d.dep_ref FROM task_deps d JOIN reach r ON d.task_ref = r.ref) "
    "SELECT d.task_ref, d.dep_ref FROM task_deps d JOIN reach r ON d.task_ref = r.ref"};
constexpr sql::Statement kTaskId{"SELECT task_id FROM tasks WHERE task_ref = $1"};
constexpr sql::Statement kAddDep{
    "INSERT INTO task_deps(task_ref, dep_ref) VALUES ($1, $2) ON CONFLICT DO NOTHING"};
constexpr sql::Statement kRemoveDep{"DELETE FROM task_deps WHERE task_ref = $1 AND dep_ref = $2"};
constexpr sql::Statement kDependents{
    "UPDATE task_status SET dependents = dependents + $2 WHERE task_ref = $1"};

Result<std::string> TaskIdOf(WriteTxn& txn, int64_t ref) {
  Result<sql::Rows> r = txn.Query(kTaskId, sql::Params(ref));
  if (!r.ok()) return r.status();
  return r->empty() ? std::string("?") : r->TakeText(0, 0);
}

// The path of dependencies from `from` to `to`, if there is one.
Result<std::vector<int64_t>> DependencyPath(WriteTxn& txn, int64_t from, int64_t to) {
  Result<sql::Rows> edges = txn.Query(kReachable, sql::Params(from));
  if (!edges.ok()) return edges.status();
  std::map<int64_t, std::vector<int64_t>> next;
  for (size_t i = 0; i < edges->size(); ++i) next[edges->Int(i, 0)].push_back(edges->Int(i, 1));
  std::map<int64_t, int64_t> parent{{from, from}};
  std::vector<int64_t> queue{from};
  for (size_t i = 0; i < queue.size(); ++i) {
    for (int64_t n : next[queue[i]]) {
      if (!parent.emplace(n, queue[i]).second) continue;
      if (n == to) {
        std::vector<int64_t> path{to};
        while (path.back() != from) path.push_back(parent[path.back()]);
        return std::vector<int64_t>(path.rbegin(), path.rend());
      }
      queue.push_back(n);
    }
  }
  return std::vector<int64_t>();
}

}  // namespace

Status WriteDependencyChange(WriteTxn& txn, const DependencyChange& c) {
  txn.Exec(kDagLock);
  Result<int64_t> task = FindTask(txn, c.task_id);
  if (!task.ok()) return task.status();
  Result<sql::Rows> counted = txn.Query(kStarted, sql::Params(*task, TaskState::kPending));
  if (!counted.ok()) return counted.status();
  if (!counted->empty()) {
    std::string states;
    for (size_t i = 0; i < counted->size(); ++i) {
      states += (states.empty() ? "" : ", ") + std::to_string(counted->Int(i, 1)) + " " +
                std::string(TaskStateName(static_cast<TaskState>(counted->Int(i, 0))));
    }
    return Status::FailedPrecondition("task " + c.task_id + " is past PENDING on some nodes (" +
                                      states +
                                      "): its dependencies can change only before it starts");
  }
  std::vector<std::string> done;
  for (const std::string& dep_id : c.add) {
    if (dep_id == c.task_id) {
      return Status::InvalidArgument("task " + c.task_id + " cannot depend on itself");
    }
    Result<int64_t> dep = FindTask(txn, dep_id);
    if (!dep.ok() && dep.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("no task " + dep_id + " to depend on");
    }
    if (!dep.ok()) return dep.status();
    Result<sql::Rows> facts = txn.Query(kDepFacts, sql::Params(*dep));
    if (!facts.ok()) return facts.status();
    const auto status = static_cast<TaskState>(facts->Int(0, 0));
    if (facts->Bool(0, 1) && status != TaskState::kSucceeded) {
      return Status::FailedPrecondition("task " + dep_id + " already ended " +
                                        std::string(TaskStateName(status)) +
                                        ": depending on it would cancel " + c.task_id);
    }
    // X -> Y closes a cycle when Y already depends (transitively) on X.
    Result<std::vector<int64_t>> path = DependencyPath(txn, *dep, *task);
    if (!path.ok()) return path.status();
    if (!path->empty()) {
      std::string cycle = c.task_id;
      for (int64_t ref : *path) {
        Result<std::string> id = TaskIdOf(txn, ref);
        if (!id.ok()) return id.status();
        cycle += " -> " + *id;
      }
      return Status::FailedPrecondition("adding " + dep_id + " to the dependencies of " +
                                        c.task_id + " would make a cycle: " + cycle);
    }
    Result<int64_t> added = txn.Count(kAddDep, sql::Params(*task, *dep));
    if (!added.ok()) return added.status();
    if (*added == 0) continue;  // already there: nothing to do
    txn.Exec(kDependents, sql::Params(*dep, 1));
    done.push_back("dependency on " + dep_id + " added");
  }
  for (const std::string& dep_id : c.remove) {
    Result<int64_t> dep = FindTask(txn, dep_id);
    if (!dep.ok()) return dep.status();
    Result<int64_t> removed = txn.Count(kRemoveDep, sql::Params(*task, *dep));
    if (!removed.ok()) return removed.status();
    if (*removed == 0) {
      return Status::NotFound("task " + c.task_id + " does not depend on " + dep_id);
    }
    txn.Exec(kDependents, sql::Params(*dep, -1));
    done.push_back("dependency on " + dep_id + " removed");
  }
  if (done.empty()) return Status::Ok();
  std::string line;
  for (const std::string& d : done) line += (line.empty() ? "" : ", ") + d;
  line += " by " + c.who + (c.reason.empty() ? "" : ": " + c.reason);
  APOLLO_RETURN_IF_ERROR(AddTaskHistory(txn, *task, Cause::kDagChange, TaskState::kPending, line));
  Result<int> n = RegateTask(txn, *task, GateMove{}, Cause::kDagChange, line);
  return n.ok() ? Status::Ok() : n.status();
}

Status WriteHold(WriteTxn& txn, const HoldChange& c) {
  Result<int64_t> task = FindTask(txn, c.task_id);
  if (!task.ok()) return task.status();
  Result<sql::Rows> held = txn.Query(kHeld, sql::Params(*task));
  if (!held.ok()) return held.status();
  const std::string now = held->TakeText(0, 0);
  const auto status = static_cast<TaskState>(held->Int(0, 1));
  const bool hold = !c.who.empty() && c.hold;
  if (hold && !now.empty()) {
    return Status::FailedPrecondition("task " + c.task_id + " is held already (by " + now + ")");
  }
  if (!hold && now.empty()) {
    return Status::FailedPrecondition("task " + c.task_id + " is not held");
  }
  if (!hold && now == kRolloutAbortedHold) {
    return Status::FailedPrecondition("task " + c.task_id +
                                      ": its rollout was aborted; the nodes that had not "
                                      "started are cancelled, not released");
  }
  if (hold) {
    Result<sql::Rows> waiting = txn.Query(kWaiting, sql::Params(*task, TaskState::kPending));
    if (!waiting.ok()) return waiting.status();
    if (waiting->Int(0, 0) == 0) {
      return Status::FailedPrecondition("task " + c.task_id +
                                        " has no node waiting to start: nothing to hold");
    }
  }
  const std::string line = std::string(hold ? "held by " : "released by ") + c.who +
                           (c.reason.empty() ? "" : ": " + c.reason);
  APOLLO_RETURN_IF_ERROR(AddTaskHistory(txn, *task, Cause::kDagChange, status, line));
  GateMove move;
  move.held_by = hold ? c.who : std::string();
  Result<int> n = RegateTask(txn, *task, move, Cause::kDagChange, line);
  return n.ok() ? Status::Ok() : n.status();
}

}  // namespace apollo::store::engine
