// Creating tasks (idempotently) and registering nodes, set-based.
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "store/postgres/rows.h"
#include "store/postgres/write_paths.h"

namespace apollo::store::postgres {
namespace {

struct NodeFacts {
  int64_t ref = 0;
  bool registered = false;
};

// Finds or creates (unregistered, with a node_seq row) every node in `ids`.
std::map<std::string, NodeFacts> EnsureNodes(WriteTxn& txn, const std::set<std::string>& ids) {
  std::map<std::string, NodeFacts> out;
  if (ids.empty()) return out;
  PgArray arr;
  for (const std::string& id : ids) arr.Add(id);
  txn.Exec(
      "WITH ins AS (INSERT INTO nodes(node_id, registered, updated_at) "
      "SELECT unnest($1::text[]), false, $2 ON CONFLICT (node_id) DO NOTHING "
      "RETURNING node_ref) "
      "INSERT INTO node_seq(node_ref, hwm) SELECT node_ref, 0 FROM ins "
      "ON CONFLICT (node_ref) DO NOTHING",
      arr.str(), txn.now_us());
  pqxx::result r = txn.Exec(
      "SELECT node_id, node_ref, registered FROM nodes WHERE node_id = ANY($1::text[])",
      arr.str());
  for (const auto& row : r) {
    out[row[0].as<std::string>()] = {row[1].as<int64_t>(), row[2].as<bool>()};
    txn.RememberNode(row[0].as<std::string>(), row[1].as<int64_t>());
  }
  return out;
}

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

// Inserts the new task rows; returns task_id -> task_ref.
std::map<std::string, int64_t> InsertTaskRows(WriteTxn& txn,
                                              const std::vector<const NewTask*>& fresh) {
  PgArray id, intent, spec, prio, timeout, retries;
  for (const NewTask* t : fresh) {
    id.Add(t->spec.task_id), intent.Add(t->spec.intent), spec.Add(CanonicalSpec(t->spec));
    prio.Add(static_cast<int64_t>(t->spec.priority));
    timeout.Add(std::chrono::duration_cast<Duration>(t->spec.timeout).count());
    retries.Add(static_cast<int64_t>(t->spec.retry_policy.max_retries));
  }
  // A concurrent replica creating the same task_id makes this fail with a
  // unique violation: the writer retries and then finds the task.
  pqxx::result r = txn.Exec(
      "WITH ins AS (INSERT INTO tasks(task_id, intent, spec, priority, timeout_us, max_retries, "
      "created_at) SELECT u.id, u.intent, u.spec, u.prio, u.timeout, u.retries, $8 "
      "FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::int[]) "
      "WITH ORDINALITY AS u(id, intent, spec, prio, timeout, retries, ord) "
      "ORDER BY u.ord RETURNING task_id, task_ref), "
      "st AS (INSERT INTO task_status(task_ref, status, updated_at) "
      "SELECT task_ref, $7, $8 FROM ins) "
      "SELECT task_id, task_ref FROM ins",
      id.str(), intent.str(), spec.str(), prio.str(), timeout.str(), retries.str(),
      static_cast<int>(TaskState::kPending), txn.now_us());
  std::map<std::string, int64_t> refs;
  for (const auto& row : r) refs[row[0].as<std::string>()] = row[1].as<int64_t>();
  return refs;
}

}  // namespace

Result<std::vector<CreatedTask>> InsertTasks(WriteTxn& txn, const std::vector<NewTask>& tasks) {
  PgArray ids;
  for (const NewTask& t : tasks) {
    if (t.spec.task_id.empty()) return Status::InvalidArgument("task without task_id");
    ids.Add(t.spec.task_id);
  }
  std::map<std::string, std::string> existing;  // task_id -> canonical spec
  for (const auto& row : txn.Exec("SELECT task_id, spec FROM tasks WHERE task_id = ANY($1::text[])",
                                  ids.str())) {
    existing[row[0].as<std::string>()] = row[1].as<std::string>();
  }
  std::vector<CreatedTask> out;
  std::vector<const NewTask*> fresh;
  std::set<std::string> seen;
  for (const NewTask& t : tasks) {
    auto it = existing.find(t.spec.task_id);
    if (it != existing.end()) {
      if (it->second != CleanText(CanonicalSpec(t.spec))) {
        return Status::AlreadyExists("task " + t.spec.task_id +
                                     " already exists with a different spec");
      }
      out.push_back({t.spec.task_id, false});
      continue;
    }
    existing[t.spec.task_id] = CleanText(CanonicalSpec(t.spec));  // a repeat: a no-op
    fresh.push_back(&t);
    out.push_back({t.spec.task_id, true});
  }
  if (fresh.empty()) return out;
  std::map<std::string, int64_t> task_refs = InsertTaskRows(txn, fresh);

  // Dependencies after every task of the call exists, so a DAG may come in
  // any order within one call.
  PgArray dep_ids;
  std::set<std::string> node_ids;
  for (const NewTask* t : fresh) {
    for (const std::string& d : t->spec.depends_on) dep_ids.Add(d);
    node_ids.insert(t->node_ids.begin(), t->node_ids.end());
  }
  std::map<std::string, DepFacts> deps;
  if (!dep_ids.empty()) {
    for (const auto& row : txn.Exec("SELECT t.task_id, t.task_ref, s.status, "
                                    "s.settled_at IS NOT NULL FROM tasks t JOIN task_status s "
                                    "ON s.task_ref = t.task_ref WHERE t.task_id = ANY($1::text[])",
                                    dep_ids.str())) {
      deps[row[0].as<std::string>()] = {row[1].as<int64_t>(),
                                        static_cast<TaskState>(row[2].as<int>()),
                                        row[3].as<bool>()};
    }
  }
  std::map<std::string, NodeFacts> nodes = EnsureNodes(txn, node_ids);
  PgArray d_task, d_dep, n_task, n_node, n_due, n_due_at, n_reason;
  WriteSet ws;
  for (const NewTask* t : fresh) {
    Result<std::pair<DueKind, std::string>> start = StartOf(t->spec, deps);
    if (!start.ok()) return start.status();
    int64_t task_ref = task_refs.at(t->spec.task_id);
    for (const std::string& d : std::set<std::string>(t->spec.depends_on.begin(),
                                                      t->spec.depends_on.end())) {
      d_task.Add(task_ref), d_dep.Add(deps.at(d).ref);
    }
    for (const std::string& node_id : std::set<std::string>(t->node_ids.begin(), t->node_ids.end())) {
      const NodeFacts& n = nodes.at(node_id);
      std::string reason = start->second;
      if (reason.empty() && !n.registered) reason = "node_not_registered";
      n_task.Add(task_ref), n_node.Add(n.ref), n_due.Add(static_cast<int64_t>(start->first));
      start->first != DueKind::kNone ? n_due_at.Add(txn.now_us()) : n_due_at.AddNull();
      n_reason.Add(reason);
      ws.AddHistory(txn, {task_ref, n.ref, Cause::kCreate, Outcome::kApplied, std::nullopt,
                          std::nullopt, 0, TaskState::kPending, TaskState::kPending, 1, reason,
                          {}});
    }
  }
  if (!d_task.empty()) {
    txn.Exec("INSERT INTO task_deps(task_ref, dep_ref) SELECT * FROM unnest($1::bigint[], "
             "$2::bigint[]) ON CONFLICT DO NOTHING",
             d_task.str(), d_dep.str());
  }
  if (!n_task.empty()) {
    txn.Exec(
        "INSERT INTO task_nodes(task_ref, node_ref, state, version, attempt, retries, "
        "created_at, updated_at, due_kind, due_at, blocked_reason) "
        "SELECT u.t, u.n, $6, 1, 0, 0, $7, $7, u.due, u.due_at, u.reason "
        "FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::bigint[], $5::text[]) "
        "AS u(t, n, due, due_at, reason)",
        n_task.str(), n_node.str(), n_due.str(), n_due_at.str(), n_reason.str(),
        static_cast<int>(TaskState::kPending), txn.now_us());
  }
  RowMap none;
  Result<TouchedFacts> flushed = ws.Flush(txn, none, nullptr);
  if (!flushed.ok()) return flushed.status();
  return out;
}

Status WriteNode(WriteTxn& txn, const NodeInfo& node) {
  if (node.node_id.empty()) return Status::InvalidArgument("node without node_id");
  std::optional<int64_t> hb;
  if (node.last_heartbeat) hb = ToUnixMicros(*node.last_heartbeat);
  pqxx::result r = txn.Exec(
      "INSERT INTO nodes(node_id, registered, labels, groups_json, intents_json, mode, "
      "agent_version, last_heartbeat, updated_at) VALUES ($1, true, $2, $3, $4, $5, $6, "
      "$7::bigint, $8) ON CONFLICT (node_id) DO UPDATE SET registered = true, "
      "labels = excluded.labels, groups_json = excluded.groups_json, "
      "intents_json = excluded.intents_json, mode = excluded.mode, "
      "agent_version = excluded.agent_version, last_heartbeat = excluded.last_heartbeat, "
      "updated_at = excluded.updated_at RETURNING node_ref",
      CleanText(node.node_id), SafeDump(nlohmann::json(node.labels)),
      SafeDump(nlohmann::json(node.groups)), SafeDump(nlohmann::json(node.intents)),
      CleanText(node.mode), CleanText(node.agent_version),
      hb ? std::to_string(*hb).c_str() : nullptr, txn.now_us());
  int64_t ref = r[0][0].as<int64_t>();
  txn.Exec("INSERT INTO node_seq(node_ref, hwm) VALUES ($1, 0) ON CONFLICT DO NOTHING", ref);
  txn.RememberNode(CleanText(node.node_id), ref);
  // Rows waiting only because the node was unknown are now just pending.
  txn.Exec(
      "UPDATE task_nodes SET blocked_reason = '' WHERE node_ref = $1 AND state = $2 "
      "AND blocked_reason = 'node_not_registered'",
      ref, static_cast<int>(TaskState::kPending));
  return Status::Ok();
}

Status WriteHeartbeat(WriteTxn& txn, const std::string& node_id, TimePoint at,
                      const std::string& mode) {
  pqxx::result r = txn.Exec(
      "UPDATE nodes SET last_heartbeat = $2, mode = CASE WHEN $3 = '' THEN mode ELSE $3 END, "
      "updated_at = $4 WHERE node_id = $1 AND registered",
      CleanText(node_id), ToUnixMicros(at), CleanText(mode), txn.now_us());
  if (r.affected_rows() == 0) return Status::NotFound("no registered node " + node_id);
  return Status::Ok();
}

}  // namespace apollo::store::postgres
