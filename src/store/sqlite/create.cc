// Creating tasks (idempotently) and registering nodes.
#include <set>

#include <nlohmann/json.hpp>

#include "store/sqlite/row_ops.h"
#include "store/sqlite/write_paths.h"

namespace apollo::store::sqlite {
namespace {

// The task's ref and canonical spec, if it exists.
Result<std::optional<std::pair<int64_t, std::string>>> FindTask(WriteTxn& txn,
                                                                const std::string& task_id) {
  Result<Stmt*> st = txn.db().Prepare(
      "SELECT t.task_ref, s.spec FROM tasks t JOIN task_specs s ON s.task_ref = t.task_ref "
      "WHERE t.task_id = ?1");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, task_id);
  Result<bool> row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<std::pair<int64_t, std::string>>();
  return std::optional<std::pair<int64_t, std::string>>(std::pair(s->Int(0), s->Text(1)));
}

Result<int64_t> InsertTaskRow(WriteTxn& txn, const TaskSpec& spec, const std::string& canonical,
                              int64_t node_count) {
  Result<Stmt*> st = txn.db().Prepare(
      "INSERT INTO tasks(task_id, intent, node_count, status, priority, timeout_us, max_retries, "
      "created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, spec.task_id).Bind(2, spec.intent).Bind(3, node_count);
  s->Bind(4, static_cast<int64_t>(TaskState::kPending));
  s->Bind(5, static_cast<int64_t>(spec.priority));
  s->Bind(6, std::chrono::duration_cast<Duration>(spec.timeout).count());
  s->Bind(7, static_cast<int64_t>(spec.retry_policy.max_retries)).Bind(8, txn.now_us());
  APOLLO_RETURN_IF_ERROR(s->Run());
  int64_t ref = txn.db().LastInsertRowid();
  Result<Stmt*> sp = txn.db().Prepare("INSERT INTO task_specs(task_ref, spec) VALUES (?1, ?2)");
  if (!sp.ok()) return sp.status();
  StmtRef i(*sp);
  i->Bind(1, ref).Bind(2, canonical);
  APOLLO_RETURN_IF_ERROR(i->Run());
  return ref;
}

// Links the task to its dependencies; returns how the new rows start out.
Result<std::pair<DueKind, std::string>> LinkDeps(WriteTxn& txn, int64_t task_ref,
                                                 const TaskSpec& spec) {
  std::string pending;
  bool failed = false;
  for (const std::string& dep : spec.depends_on) {
    Result<Stmt*> st = txn.db().Prepare(
        "SELECT task_ref, status, settled_at IS NOT NULL FROM tasks WHERE task_id = ?1");
    if (!st.ok()) return st.status();
    StmtRef s(*st);
    s->Bind(1, dep);
    Result<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      return Status::InvalidArgument("task " + spec.task_id + " depends on unknown task " + dep);
    }
    int64_t dep_ref = s->Int(0);
    auto status = static_cast<TaskState>(s->Int(1));
    bool settled = s->Int(2) != 0;
    if (status != TaskState::kSucceeded) pending += (pending.empty() ? "" : ",") + dep;
    failed = failed || (settled && status != TaskState::kSucceeded);
    Result<Stmt*> ins = txn.db().Prepare(
        "INSERT OR IGNORE INTO task_deps(task_ref, dep_ref) VALUES (?1, ?2)");
    if (!ins.ok()) return ins.status();
    StmtRef i(*ins);
    i->Bind(1, task_ref).Bind(2, dep_ref);
    APOLLO_RETURN_IF_ERROR(i->Run());
  }
  if (failed) return std::pair(DueKind::kUpstreamFailed, std::string("upstream_failed"));
  if (!pending.empty()) return std::pair(DueKind::kNone, "deps_pending [" + pending + "]");
  return std::pair(DueKind::kDispatch, std::string());
}

Status InsertNodeRows(WriteTxn& txn, int64_t task_ref, const NewTask& t, DueKind due,
                      const std::string& blocked) {
  std::set<std::string> nodes(t.node_ids.begin(), t.node_ids.end());
  for (const std::string& node_id : nodes) {
    Result<int64_t> node_ref = txn.EnsureNode(node_id);
    if (!node_ref.ok()) return node_ref.status();
    std::string reason = blocked;
    const NodeEntry* n = txn.FindNode(node_id);
    if (reason.empty() && n && !n->registered) reason = "node_not_registered";
    Result<Stmt*> st = txn.db().Prepare(
        "INSERT INTO task_nodes(task_ref, node_ref, state, version, attempt, retries, "
        "created_at, updated_at, due_kind, due_at, blocked_reason) "
        "VALUES (?1, ?2, ?3, 1, 0, 0, ?4, ?4, ?5, ?6, ?7)");
    if (!st.ok()) return st.status();
    StmtRef s(*st);
    s->Bind(1, task_ref).Bind(2, *node_ref).Bind(3, static_cast<int64_t>(TaskState::kPending));
    s->Bind(4, txn.now_us()).Bind(5, static_cast<int64_t>(due));
    if (due != DueKind::kNone) s->Bind(6, txn.now_us());
    s->Bind(7, reason);
    APOLLO_RETURN_IF_ERROR(s->Run());
    APOLLO_RETURN_IF_ERROR(AppendHistory(
        txn, {task_ref, *node_ref, Cause::kCreate, Outcome::kApplied, std::nullopt, std::nullopt,
              0, TaskState::kPending, TaskState::kPending, 1, reason, {}}));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<CreatedTask>> InsertTasks(WriteTxn& txn, const std::vector<NewTask>& tasks) {
  std::vector<CreatedTask> out;
  std::vector<std::pair<int64_t, const NewTask*>> fresh;
  for (const NewTask& t : tasks) {
    if (t.spec.task_id.empty()) return Status::InvalidArgument("task without task_id");
    std::string canonical;
    try {
      canonical = CanonicalSpec(t.spec);
    } catch (const nlohmann::json::exception& e) {  // e.g. invalid UTF-8
      return Status::InvalidArgument("task " + t.spec.task_id + ": " + e.what());
    }
    Result<std::optional<std::pair<int64_t, std::string>>> found = FindTask(txn, t.spec.task_id);
    if (!found.ok()) return found.status();
    if (*found) {
      if ((*found)->second != canonical) {
        return Status::AlreadyExists("task " + t.spec.task_id +
                                     " already exists with a different spec");
      }
      out.push_back({t.spec.task_id, false});
      continue;
    }
    std::set<std::string> nodes(t.node_ids.begin(), t.node_ids.end());
    Result<int64_t> ref =
        InsertTaskRow(txn, t.spec, canonical, static_cast<int64_t>(nodes.size()));
    if (!ref.ok()) return ref.status();
    fresh.emplace_back(*ref, &t);
    out.push_back({t.spec.task_id, true});
  }
  // Dependencies after every task of the call exists, so a DAG may come in
  // any order within one call.
  for (auto& [ref, t] : fresh) {
    Result<std::pair<DueKind, std::string>> due = LinkDeps(txn, ref, t->spec);
    if (!due.ok()) return due.status();
    APOLLO_RETURN_IF_ERROR(InsertNodeRows(txn, ref, *t, due->first, due->second));
  }
  return out;
}

Status WriteNode(WriteTxn& txn, const NodeInfo& node) {
  if (node.node_id.empty()) return Status::InvalidArgument("node without node_id");
  Result<Stmt*> st = txn.db().Prepare(
      "INSERT INTO nodes(node_id, registered, labels, groups_json, intents_json, mode, "
      "agent_version, last_heartbeat, updated_at) VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
      "ON CONFLICT(node_id) DO UPDATE SET registered = 1, labels = excluded.labels, "
      "groups_json = excluded.groups_json, intents_json = excluded.intents_json, "
      "mode = excluded.mode, agent_version = excluded.agent_version, "
      "last_heartbeat = excluded.last_heartbeat, updated_at = excluded.updated_at "
      "RETURNING node_ref");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, node.node_id).Bind(2, SafeDump(node.labels));
  s->Bind(3, SafeDump(node.groups)).Bind(4, SafeDump(node.intents));
  s->Bind(5, node.mode).Bind(6, node.agent_version);
  if (node.last_heartbeat) s->Bind(7, ToUnixMicros(*node.last_heartbeat));
  s->Bind(8, txn.now_us());
  Result<bool> row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::Internal("upsert returned no node_ref");
  int64_t ref = s->Int(0);
  APOLLO_RETURN_IF_ERROR(s->Run());
  txn.MarkRegistered(node.node_id, ref);
  // Rows waiting only because the node was unknown are now just pending.
  Result<Stmt*> clear = txn.db().Prepare(
      "UPDATE task_nodes SET blocked_reason = '' WHERE node_ref = ?1 AND state = ?2 "
      "AND blocked_reason = 'node_not_registered'");
  if (!clear.ok()) return clear.status();
  StmtRef c(*clear);
  c->Bind(1, ref).Bind(2, static_cast<int64_t>(TaskState::kPending));
  return c->Run();
}

Status WriteHeartbeat(WriteTxn& txn, const std::string& node_id, TimePoint at,
                      const std::string& mode) {
  Result<Stmt*> st = txn.db().Prepare(
      "UPDATE nodes SET last_heartbeat = ?2, mode = CASE WHEN ?3 = '' THEN mode ELSE ?3 END, "
      "updated_at = ?4 WHERE node_id = ?1 AND registered = 1");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, node_id).Bind(2, ToUnixMicros(at)).Bind(3, mode).Bind(4, txn.now_us());
  APOLLO_RETURN_IF_ERROR(s->Run());
  if (txn.db().Changes() == 0) return Status::NotFound("no registered node " + node_id);
  return Status::Ok();
}

}  // namespace apollo::store::sqlite
