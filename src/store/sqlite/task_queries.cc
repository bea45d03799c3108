// Task, history and due-work queries.
#include <nlohmann/json.hpp>

#include "store/sqlite/queries.h"
#include "store/sqlite/reader_pool.h"

namespace apollo::store::sqlite {
namespace {

constexpr const char* kNodeRowColumns =
    "t.task_id, n.node_id, tn.state, tn.version, tn.attempt, tn.retries, tn.created_at, "
    "tn.updated_at, tn.last_error, COALESCE(p.body, tn.result), tn.result_ref, "
    "tn.blocked_reason, tn.due_kind, tn.due_at "
    "FROM task_nodes tn JOIN tasks t ON t.task_ref = tn.task_ref "
    "JOIN nodes n ON n.node_ref = tn.node_ref "
    "LEFT JOIN payloads p ON p.payload_id = tn.result_ref ";

NodeRow ReadNodeRow(const Stmt& s) {
  NodeRow r;
  r.task_id = s.Text(0);
  r.node_id = s.Text(1);
  r.state = static_cast<TaskState>(s.Int(2));
  r.version = s.Int(3);
  r.attempt = static_cast<uint32_t>(s.Int(4));
  r.retries = static_cast<int>(s.Int(5));
  r.created_at = FromUnixMicros(s.Int(6));
  r.updated_at = FromUnixMicros(s.Int(7));
  r.last_error = s.Text(8);
  r.result = s.Text(9);
  r.result_ref = s.OptInt(10);
  r.blocked_reason = s.Text(11);
  r.due_kind = static_cast<DueKind>(s.Int(12));
  if (!s.IsNull(13)) r.due_at = FromUnixMicros(s.Int(13));
  return r;
}

template <typename T, typename ReadFn>
Result<std::vector<T>> Collect(Stmt& s, ReadFn read) {
  std::vector<T> out;
  for (;;) {
    Result<bool> row = s.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(read(s));
  }
}

}  // namespace

Result<TaskRow> QueryTask(Db& db, std::string_view task_id) {
  Result<ReadTxn> txn = ReadTxn::Begin(db);
  if (!txn.ok()) return txn.status();
  TaskRow task;
  int64_t task_ref = 0;
  {
    Result<Stmt*> st = db.Prepare(
        "SELECT t.task_ref, s.spec, t.status, t.created_at, t.updated_at FROM tasks t "
        "JOIN task_specs s ON s.task_ref = t.task_ref WHERE t.task_id = ?1");
    if (!st.ok()) return st.status();
    StmtRef s(*st);
    s->Bind(1, task_id);
    Result<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::NotFound("no task " + std::string(task_id));
    task_ref = s->Int(0);
    nlohmann::json j = nlohmann::json::parse(s->Text(1), nullptr, false);
    Result<TaskSpec> spec = SpecFromJson(j);
    if (!spec.ok()) return spec.status().WithPrefix("stored spec of " + std::string(task_id));
    task.spec = std::move(*spec);
    task.status = static_cast<TaskState>(s->Int(2));
    task.created_at = FromUnixMicros(s->Int(3));
    task.updated_at = FromUnixMicros(s->Int(4));
  }
  Result<Stmt*> st = db.Prepare(std::string("SELECT ") + kNodeRowColumns +
                                "WHERE tn.task_ref = ?1 ORDER BY n.node_id");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, task_ref);
  Result<std::vector<NodeRow>> nodes = Collect<NodeRow>(*s, ReadNodeRow);
  if (!nodes.ok()) return nodes.status();
  task.nodes = std::move(*nodes);
  return task;
}

Result<TaskPage> QueryTasks(Db& db, const TaskQuery& q) {
  if (q.limit < 1 || q.limit > 1000) return Status::InvalidArgument("limit must be 1..1000");
  int64_t after = 0;
  if (!q.page_token.empty()) {
    char* end = nullptr;
    after = std::strtoll(q.page_token.c_str(), &end, 10);
    if (*end != '\0' || after <= 0) return Status::InvalidArgument("bad page token");
  }
  // Only the filters present are in the SQL, so each shape uses its index.
  std::string sql =
      "SELECT task_id, intent, status, created_at, updated_at, task_ref FROM tasks WHERE 1";
  if (q.status) sql += " AND status = ?1";
  if (q.intent) sql += " AND intent = ?2";
  if (q.created_after) sql += " AND created_at >= ?3";
  if (q.created_before) sql += " AND created_at < ?4";
  if (after) sql += " AND task_ref < ?5";
  sql += " ORDER BY task_ref DESC LIMIT ?6";
  Result<Stmt*> st = db.Prepare(sql);
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  if (q.status) s->Bind(1, static_cast<int64_t>(*q.status));
  if (q.intent) s->Bind(2, *q.intent);
  if (q.created_after) s->Bind(3, ToUnixMicros(*q.created_after));
  if (q.created_before) s->Bind(4, ToUnixMicros(*q.created_before));
  if (after) s->Bind(5, after);
  s->Bind(6, static_cast<int64_t>(q.limit) + 1);
  TaskPage page;
  int64_t last_ref = 0;
  for (;;) {
    Result<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(page.tasks.size()) == q.limit) {
      page.next_page_token = std::to_string(last_ref);
      break;
    }
    page.tasks.push_back({s->Text(0), s->Text(1), static_cast<TaskState>(s->Int(2)),
                          FromUnixMicros(s->Int(3)), FromUnixMicros(s->Int(4))});
    last_ref = s->Int(5);
  }
  return page;
}

Result<std::vector<NodeRow>> QueryNodeTasks(Db& db, std::string_view node_id, int limit) {
  Result<Stmt*> st = db.Prepare(std::string("SELECT ") + kNodeRowColumns +
                                "WHERE tn.node_ref = (SELECT node_ref FROM nodes "
                                "WHERE node_id = ?1) ORDER BY tn.task_ref DESC LIMIT ?2");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, node_id).Bind(2, static_cast<int64_t>(limit));
  return Collect<NodeRow>(*s, ReadNodeRow);
}

Result<std::vector<HistoryRow>> QueryHistory(Db& db, std::string_view task_id) {
  Result<Stmt*> st = db.Prepare(
      "SELECT h.hist_id, t.task_id, n.node_id, h.cause, h.outcome, h.seq, h.event_type, "
      "h.attempt, h.from_state, h.to_state, h.version, h.at, h.detail, "
      "COALESCE(p.body, h.payload) FROM tasks t "
      "JOIN history h ON h.task_ref = t.task_ref JOIN nodes n ON n.node_ref = h.node_ref "
      "LEFT JOIN payloads p ON p.payload_id = h.payload_ref "
      "WHERE t.task_id = ?1 ORDER BY h.hist_id");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, task_id);
  return Collect<HistoryRow>(*s, [](const Stmt& r) {
    HistoryRow h;
    h.id = r.Int(0);
    h.task_id = r.Text(1);
    h.node_id = r.Text(2);
    h.cause = static_cast<Cause>(r.Int(3));
    h.outcome = static_cast<Outcome>(r.Int(4));
    if (!r.IsNull(5)) h.event_id = MakeEventId(h.node_id, static_cast<uint64_t>(r.Int(5)));
    if (!r.IsNull(6)) h.event_type = static_cast<EventType>(r.Int(6));
    h.attempt = static_cast<uint32_t>(r.Int(7));
    h.from = static_cast<TaskState>(r.Int(8));
    h.to = static_cast<TaskState>(r.Int(9));
    h.version = r.Int(10);
    h.at = FromUnixMicros(r.Int(11));
    h.detail = r.Text(12);
    h.payload = r.Text(13);
    return h;
  });
}

Result<std::vector<DueItem>> QueryDue(Db& db, TimePoint now, int limit) {
  Result<Stmt*> st = db.Prepare(
      "SELECT t.task_id, n.node_id, tn.due_kind, tn.due_at, tn.state, tn.version, tn.attempt, "
      "tn.retries, t.priority FROM task_nodes tn INDEXED BY task_nodes_due "
      "JOIN tasks t ON t.task_ref = tn.task_ref JOIN nodes n ON n.node_ref = tn.node_ref "
      "WHERE tn.due_at IS NOT NULL AND tn.due_at <= ?1 ORDER BY tn.due_at LIMIT ?2");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, ToUnixMicros(now)).Bind(2, static_cast<int64_t>(limit));
  return Collect<DueItem>(*s, [](const Stmt& r) {
    DueItem d;
    d.task_id = r.Text(0);
    d.node_id = r.Text(1);
    d.kind = static_cast<DueKind>(r.Int(2));
    d.due_at = FromUnixMicros(r.Int(3));
    d.state = static_cast<TaskState>(r.Int(4));
    d.version = r.Int(5);
    d.attempt = static_cast<uint32_t>(r.Int(6));
    d.retries = static_cast<int>(r.Int(7));
    d.priority = static_cast<Priority>(r.Int(8));
    return d;
  });
}

Result<std::string> QueryPayload(Db& db, int64_t ref) {
  Result<Stmt*> st = db.Prepare("SELECT body FROM payloads WHERE payload_id = ?1");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, ref);
  Result<bool> row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no payload " + std::to_string(ref));
  return s->Text(0);
}

}  // namespace apollo::store::sqlite
