// Creating tasks, idempotently and set-based: one statement per kind of
// row whatever the number of tasks.
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "store/engine/gates.h"
#include "store/engine/nodes.h"
#include "store/engine/row_change.h"
#include "store/engine/rows.h"
#include "store/engine/write_paths.h"

namespace apollo::store::engine {
namespace {

constexpr sql::Column kIdCols[] = {{"task_id", sql::Type::kText}};
constexpr sql::Statement kFindTasks{
    "SELECT t.task_id, t.spec FROM tasks t, @rows WHERE t.task_id = u.task_id", kIdCols};

constexpr sql::Column kTaskCols[] = {{"task_id", sql::Type::kText},
                                     {"intent", sql::Type::kText},
                                     {"spec", sql::Type::kText},
                                     {"priority", sql::Type::kInt}};
// A concurrent store creating the same task_id makes this fail with a unique
// violation: the writer runs the batch again and then finds the task. (Refs
// are read back by kFindRefs: SQLite's RETURNING costs more than a lookup.)
constexpr sql::Statement kInsertTasks{
    "INSERT INTO tasks(task_id, intent, spec, priority, created_at) "
    "SELECT u.task_id, u.intent, u.spec, u.priority, $1 FROM @rows",
    kTaskCols};
constexpr sql::Statement kFindRefs{
    "SELECT t.task_id, t.task_ref FROM tasks t, @rows WHERE t.task_id = u.task_id", kIdCols};

constexpr sql::Column kStatusCols[] = {
    {"task_ref", sql::Type::kInt},    {"status", sql::Type::kInt},
    {"timeout_us", sql::Type::kInt},  {"max_retries", sql::Type::kInt},
    {"node_count", sql::Type::kInt},  {"start_timeout_us", sql::Type::kInt},
    {"compensate", sql::Type::kBool}, {"open_batch", sql::Type::kInt},
    {"follow", sql::Type::kBool}};
constexpr sql::Statement kInsertStatus{
    "INSERT INTO task_status(task_ref, status, updated_at, timeout_us, max_retries, node_count, "
    "start_timeout_us, compensate, open_batch, follow) SELECT u.task_ref, u.status, $1, "
    "u.timeout_us, u.max_retries, u.node_count, u.start_timeout_us, u.compensate, u.open_batch, "
    "u.follow FROM @rows",
    kStatusCols};

constexpr sql::Column kRolloutCols[] = {
    {"task_ref", sql::Type::kInt}, {"state", sql::Type::kInt}, {"batches", sql::Type::kInt}};
constexpr sql::Statement kInsertRollouts{
    "INSERT INTO rollouts(task_ref, state, batches, version, updated_at) "
    "SELECT u.task_ref, u.state, u.batches, 1, $1 FROM @rows",
    kRolloutCols};

// Locked: a dependency settling in another store waits for this create (or
// this create for it), so the new rows see its final status, and it sees
// this task among its dependents.
constexpr sql::Statement kDepFacts{
    "SELECT t.task_id, t.task_ref, s.status, s.settled_at IS NOT NULL "
    "FROM tasks t JOIN task_status s ON s.task_ref = t.task_ref, @rows "
    "WHERE t.task_id = u.task_id /*@pg ORDER BY s.task_ref FOR UPDATE OF s*/",
    kIdCols};

constexpr sql::Column kCountCols[] = {{"task_ref", sql::Type::kInt}, {"n", sql::Type::kInt}};
constexpr sql::Statement kAddDependents{
    "UPDATE task_status AS s SET dependents = s.dependents + u.n FROM @rows "
    "WHERE s.task_ref = u.task_ref",
    kCountCols};

constexpr sql::Column kDepCols[] = {{"task_ref", sql::Type::kInt}, {"dep_ref", sql::Type::kInt}};
constexpr sql::Statement kInsertDeps{
    "INSERT INTO task_deps(task_ref, dep_ref) SELECT u.task_ref, u.dep_ref FROM @rows "
    "WHERE true ON CONFLICT DO NOTHING",
    kDepCols};

// A row dispatched on create starts at attempt 1, version 2 (created, then
// dispatched); any other at attempt 0, version 1.
constexpr sql::Column kNodeRowCols[] = {
    {"task_ref", sql::Type::kInt}, {"node_ref", sql::Type::kInt},
    {"state", sql::Type::kInt},    {"attempt", sql::Type::kInt},
    {"due_kind", sql::Type::kInt}, {"due_at", sql::Type::kInt},
    {"reason", sql::Type::kText},  {"start_deadline", sql::Type::kInt},
    {"priority", sql::Type::kInt}, {"batch", sql::Type::kInt}};
constexpr sql::Statement kInsertNodeRows{
    "INSERT INTO task_nodes(task_ref, node_ref, state, version, attempt, retries, created_at, "
    "updated_at, due_kind, due_at, blocked_reason, start_deadline, priority, batch) "
    "SELECT u.task_ref, u.node_ref, u.state, u.attempt + 1, u.attempt, 0, $1, $1, u.due_kind, "
    "u.due_at, u.reason, u.start_deadline, u.priority, u.batch FROM @rows",
    kNodeRowCols};

struct DepFacts {
  int64_t ref = 0;
  TaskState status = TaskState::kPending;
  bool settled = false;
};

// How the new rows of `spec` start out, given its dependencies.
Result<std::pair<DueKind, std::string>> StartOf(const TaskSpec& spec,
                                                const std::map<std::string, DepFacts>& deps) {
  std::string pending;
  bool failed = false;
  for (const std::string& dep : spec.depends_on) {
    auto it = deps.find(dep);
    if (it == deps.end()) {
      return Status::InvalidArgument("task " + spec.task_id + " depends on unknown task " + dep);
    }
    if (it->second.status != TaskState::kSucceeded) pending += (pending.empty() ? "" : ",") + dep;
    failed = failed || (it->second.settled && it->second.status != TaskState::kSucceeded);
  }
  if (failed) return std::pair(DueKind::kUpstreamFailed, std::string("upstream_failed"));
  if (!pending.empty()) return std::pair(DueKind::kNone, "deps_pending [" + pending + "]");
  return std::pair(DueKind::kDispatch, std::string());
}

struct Fresh {
  const NewTask* task;
  std::set<std::string> nodes;
  // Of nodes: those to create DISPATCHED (NewTask::dispatch_now), decided
  // once the dependencies and nodes are known.
  std::set<std::string> dispatch;
  size_t out = 0;  // its CreatedTask
  // With a rollout: each node's batch (core/rollout.h), in node order.
  std::map<std::string, int> batch{};
  int batches = 0;
};

// The batch of each node of a rollout task; batch 1 opens at once.
void PlanRollout(Fresh& f) {
  if (!f.task->spec.rollout) return;
  std::vector<int> plan = PlanBatches(*f.task->spec.rollout, f.nodes.size());
  size_t i = 0;
  for (const std::string& n : f.nodes) f.batch[n] = plan[i++];
  f.batches = plan.empty() ? 0 : plan.back();
}

// Inserts the task and task_status rows; returns task_id -> task_ref.
Result<std::map<std::string, int64_t>> InsertTaskRows(
    WriteTxn& txn, const std::vector<Fresh>& fresh,
    const std::map<std::string, std::string>& canonical) {
  sql::RowSet tasks(kInsertTasks), ids(kFindRefs);
  for (const Fresh& f : fresh) {
    const TaskSpec& s = f.task->spec;
    tasks.Add(s.task_id, s.intent, canonical.at(s.task_id), s.priority);
    ids.Add(s.task_id);
  }
  txn.Exec(kInsertTasks, sql::Params(txn.now_us()), &tasks);
  Result<sql::Rows> r = txn.Query(kFindRefs, {}, &ids);
  if (!r.ok()) return r.status();
  std::map<std::string, int64_t> refs;
  for (size_t i = 0; i < r->size(); ++i) {
    txn.task_refs().Put(r->Text(i, 0), r->Int(i, 1));  // for the events to come
    refs[r->TakeText(i, 0)] = r->Int(i, 1);
  }
  sql::RowSet status(kInsertStatus);
  for (const Fresh& f : fresh) {
    const TaskSpec& s = f.task->spec;
    // compensate: an on_failure to run, or (a compensation task) an alert
    // to raise when it fails for good.
    // The roll-up of its new rows: DISPATCHED where dispatched on create,
    // else PENDING.
    std::vector<TaskState> states;
    states.reserve(f.nodes.size());
    for (const std::string& n : f.nodes) {
      states.push_back(f.dispatch.count(n) ? TaskState::kDispatched : TaskState::kPending);
    }
    const TaskState rolled = RollUp(states);
    status.Add(refs.at(s.task_id), rolled, std::chrono::duration_cast<Duration>(s.timeout).count(),
               s.retry_policy.max_retries, f.nodes.size(),
               std::chrono::duration_cast<Duration>(f.task->start_timeout).count(),
               s.on_failure.has_value() || !s.compensates.empty(), s.rollout ? 1 : 0,
               s.target_selector.follow);
  }
  txn.Exec(kInsertStatus, sql::Params(txn.now_us()), &status);
  sql::RowSet rollouts(kInsertRollouts);
  for (const Fresh& f : fresh) {
    if (!f.task->spec.rollout) continue;
    rollouts.Add(refs.at(f.task->spec.task_id),
                 f.batches == 0 ? RolloutState::kCompleted : RolloutState::kRunning, f.batches);
  }
  if (!rollouts.empty()) txn.Exec(kInsertRollouts, sql::Params(txn.now_us()), &rollouts);
  return refs;
}

Result<std::map<std::string, DepFacts>> LoadDeps(WriteTxn& txn, const std::vector<Fresh>& fresh) {
  sql::RowSet ids(kDepFacts);
  std::set<std::string> asked;
  for (const Fresh& f : fresh) {
    for (const std::string& d : f.task->spec.depends_on) {
      if (asked.insert(d).second) ids.Add(d);
    }
  }
  std::map<std::string, DepFacts> deps;
  Result<sql::Rows> r = txn.Query(kDepFacts, {}, &ids);
  if (!r.ok()) return r.status();
  for (size_t i = 0; i < r->size(); ++i) {
    deps[r->TakeText(i, 0)] = {r->Int(i, 1), static_cast<TaskState>(r->Int(i, 2)), r->Bool(i, 3)};
  }
  return deps;
}

}  // namespace

Result<std::vector<std::string>> CanonicalSpecs(const std::vector<NewTask>& tasks) {
  std::vector<std::string> specs;
  specs.reserve(tasks.size());
  for (const NewTask& t : tasks) {
    if (t.spec.task_id.empty()) return Status::InvalidArgument("task without task_id");
    try {
      specs.push_back(CanonicalSpec(t.spec));
    } catch (const nlohmann::json::exception& e) {  // e.g. invalid UTF-8
      return Status::InvalidArgument("task " + t.spec.task_id + ": " + e.what());
    }
  }
  return specs;
}

Result<std::vector<CreatedTask>> InsertTasks(WriteTxn& txn, const std::vector<NewTask>& tasks,
                                             const std::vector<std::string>& specs) {
  if (specs.size() != tasks.size()) return Status::Internal("InsertTasks: one spec per task");
  std::map<std::string, std::string> canonical;  // task_id -> first canonical spec
  sql::RowSet ids(kFindTasks);
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (canonical.emplace(tasks[i].spec.task_id, specs[i]).second) ids.Add(tasks[i].spec.task_id);
  }
  Result<sql::Rows> found = txn.Query(kFindTasks, {}, &ids);
  if (!found.ok()) return found.status();
  std::map<std::string, std::string> existing;  // task_id -> stored canonical spec
  for (size_t i = 0; i < found->size(); ++i)
    existing[found->TakeText(i, 0)] = found->TakeText(i, 1);

  std::vector<CreatedTask> out;
  std::vector<Fresh> fresh;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const NewTask& t = tasks[i];
    const std::string& spec = specs[i];
    auto it = existing.find(t.spec.task_id);
    if (it != existing.end()) {
      if (it->second != spec) {
        return Status::AlreadyExists("task " + t.spec.task_id +
                                     " already exists with a different spec");
      }
      out.push_back({t.spec.task_id, false});
      continue;
    }
    existing[t.spec.task_id] = spec;  // a repeat in this call is a no-op
    fresh.push_back(
        {&t, std::set<std::string>(t.node_ids.begin(), t.node_ids.end()), {}, out.size()});
    out.push_back({t.spec.task_id, true, {}});
  }
  if (fresh.empty()) return out;
  std::set<std::string> node_ids;
  for (const Fresh& f : fresh) node_ids.insert(f.nodes.begin(), f.nodes.end());
  Result<NodeFacts> nodes = EnsureNodes(txn, node_ids);
  if (!nodes.ok()) return nodes.status();
  // Dispatched on create: only a row that could start now (a task without
  // dependencies, a registered node).
  for (Fresh& f : fresh) {
    PlanRollout(f);
    if (!f.task->spec.depends_on.empty()) continue;
    for (const std::string& n : f.task->dispatch_now) {
      const bool gated = !f.batch.empty() && f.batch.at(n) > 1;
      if (f.nodes.count(n) && nodes->at(n).registered && !gated) f.dispatch.insert(n);
    }
  }
  Result<std::map<std::string, int64_t>> task_refs = InsertTaskRows(txn, fresh, canonical);
  if (!task_refs.ok()) return task_refs.status();

  // Dependencies after every task of the call exists, so a DAG may come in
  // any order within one call.
  Result<std::map<std::string, DepFacts>> deps = LoadDeps(txn, fresh);
  if (!deps.ok()) return deps.status();

  sql::RowSet dep_rows(kInsertDeps), node_rows(kInsertNodeRows);
  std::map<int64_t, int> dependents;  // dep_ref -> new tasks depending on it
  WriteSet ws;
  for (const Fresh& f : fresh) {
    Result<std::pair<DueKind, std::string>> start = StartOf(f.task->spec, *deps);
    if (!start.ok()) return start.status();
    int64_t task_ref = task_refs->at(f.task->spec.task_id);
    const std::vector<std::string>& depends_on = f.task->spec.depends_on;
    for (const std::string& d : std::set<std::string>(depends_on.begin(), depends_on.end())) {
      dep_rows.Add(task_ref, deps->at(d).ref);
      ++dependents[deps->at(d).ref];
    }
    for (const std::string& node_id : f.nodes) {
      const NodeFact& n = nodes->at(node_id);
      std::string reason = start->second;
      const int batch = f.batch.empty() ? 0 : f.batch.at(node_id);
      DueKind due_kind = start->first;
      if (due_kind == DueKind::kDispatch && batch > 1) {  // waits for its batch
        due_kind = DueKind::kNone;
        reason = RolloutWaitReason(batch);
      }
      if (reason.empty() && !n.registered) reason = "node_not_registered";
      std::optional<int64_t> due_at, start_deadline;
      if (due_kind != DueKind::kNone) due_at = txn.now_us();
      if (due_kind == DueKind::kDispatch && f.task->start_timeout.count() > 0) {
        start_deadline =
            txn.now_us() + std::chrono::duration_cast<Duration>(f.task->start_timeout).count();
      }
      const bool dispatch = f.dispatch.count(node_id) > 0;
      std::string blocked = reason;
      if (dispatch) {
        // Left as a dispatch pass leaves a sent row: the same rule.
        RowChange sent;
        DueFacts facts;
        facts.start_deadline = start_deadline;
        FillDueFor(facts, TaskState::kDispatched, txn.now(), f.task->ack_deadline, std::nullopt, 0,
                   false, sent);
        blocked = std::move(sent.blocked_reason);
        due_kind = sent.due_kind;
        due_at = sent.due_at;
        out[f.out].dispatched.push_back(node_id);
      }
      node_rows.Add(task_ref, n.ref, dispatch ? TaskState::kDispatched : TaskState::kPending,
                    dispatch ? 1 : 0, due_kind, due_at, blocked, start_deadline,
                    f.task->spec.priority, batch);
      // A compensation task names what it compensates in its first row.
      std::string detail = reason;
      if (batch > 0) {
        detail = "rollout batch " + std::to_string(batch) + " of " + std::to_string(f.batches) +
                 (reason.empty() ? "" : "; " + reason);
      }
      if (!f.task->spec.compensates.empty()) {
        detail = "compensates task " + f.task->spec.compensates + " (its on_failure intent)" +
                 (reason.empty() ? "" : "; " + reason);
      }
      APOLLO_RETURN_IF_ERROR(ws.AddHistory(txn, {task_ref,
                                                 n.ref,
                                                 Cause::kCreate,
                                                 Outcome::kApplied,
                                                 std::nullopt,
                                                 std::nullopt,
                                                 0,
                                                 TaskState::kPending,
                                                 TaskState::kPending,
                                                 1,
                                                 detail,
                                                 {}}));
      if (dispatch) {
        APOLLO_RETURN_IF_ERROR(ws.AddHistory(txn, {task_ref,
                                                   n.ref,
                                                   Cause::kDispatch,
                                                   Outcome::kApplied,
                                                   std::nullopt,
                                                   std::nullopt,
                                                   1,
                                                   TaskState::kPending,
                                                   TaskState::kDispatched,
                                                   2,
                                                   "sent to " + node_id,
                                                   {}}));
      }
    }
  }
  txn.Exec(kInsertDeps, {}, &dep_rows);
  sql::RowSet counts(kAddDependents);
  for (const auto& [ref, n] : dependents) counts.Add(ref, n);
  txn.Exec(kAddDependents, {}, &counts);
  txn.Exec(kInsertNodeRows, sql::Params(txn.now_us()), &node_rows);
  ws.FlushLog(txn);
  return out;
}

}  // namespace apollo::store::engine
