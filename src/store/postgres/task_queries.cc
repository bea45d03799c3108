// Task, history and due-work queries.
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "store/postgres/queries.h"

namespace apollo::store::postgres {
namespace {

constexpr const char* kNodeRowColumns =
    "t.task_id, n.node_id, tn.state, tn.version, tn.attempt, tn.retries, tn.created_at, "
    "tn.updated_at, tn.last_error, COALESCE(p.body, tn.result), tn.result_ref, "
    "tn.blocked_reason, tn.due_kind, tn.due_at "
    "FROM task_nodes tn JOIN tasks t ON t.task_ref = tn.task_ref "
    "JOIN nodes n ON n.node_ref = tn.node_ref "
    "LEFT JOIN payloads p ON p.payload_id = tn.result_ref ";

NodeRow ReadNodeRow(const pqxx::row& s) {
  NodeRow r;
  r.task_id = s[0].as<std::string>();
  r.node_id = s[1].as<std::string>();
  r.state = static_cast<TaskState>(s[2].as<int>());
  r.version = s[3].as<int64_t>();
  r.attempt = static_cast<uint32_t>(s[4].as<int64_t>());
  r.retries = s[5].as<int>();
  r.created_at = FromUnixMicros(s[6].as<int64_t>());
  r.updated_at = FromUnixMicros(s[7].as<int64_t>());
  r.last_error = s[8].as<std::string>();
  r.result = s[9].as<std::string>();
  r.result_ref = Opt<int64_t>(s[10]);
  r.blocked_reason = s[11].as<std::string>();
  r.due_kind = static_cast<DueKind>(s[12].as<int>());
  if (!s[13].is_null()) r.due_at = FromUnixMicros(s[13].as<int64_t>());
  return r;
}

}  // namespace

Result<TaskRow> QueryTask(ReadCtx& db, std::string_view task_id) {
  pqxx::result t = db.Exec(
      "SELECT t.task_ref, t.spec, s.status, t.created_at, s.updated_at FROM tasks t "
      "JOIN task_status s ON s.task_ref = t.task_ref WHERE t.task_id = $1",
      CleanText(task_id));
  if (t.empty()) return Status::NotFound("no task " + std::string(task_id));
  TaskRow task;
  nlohmann::json j = nlohmann::json::parse(t[0][1].as<std::string>(), nullptr, false);
  Result<TaskSpec> spec = SpecFromJson(j);
  if (!spec.ok()) return spec.status().WithPrefix("stored spec of " + std::string(task_id));
  task.spec = std::move(*spec);
  task.status = static_cast<TaskState>(t[0][2].as<int>());
  task.created_at = FromUnixMicros(t[0][3].as<int64_t>());
  task.updated_at = FromUnixMicros(t[0][4].as<int64_t>());
  pqxx::result rows = db.Exec(std::string("SELECT ") + kNodeRowColumns +
                                  "WHERE tn.task_ref = $1 ORDER BY n.node_id",
                              t[0][0].as<int64_t>());
  for (const auto& r : rows) task.nodes.push_back(ReadNodeRow(r));
  return task;
}

Result<TaskPage> QueryTasks(ReadCtx& db, const TaskQuery& q) {
  if (q.limit < 1 || q.limit > 1000) return Status::InvalidArgument("limit must be 1..1000");
  int64_t after = 0;
  if (!q.page_token.empty()) {
    char* end = nullptr;
    after = std::strtoll(q.page_token.c_str(), &end, 10);
    if (*end != '\0' || after <= 0) return Status::InvalidArgument("bad page token");
  }
  // NULL parameters switch a filter off; the planner folds them per call
  // (custom plans), so each shape still uses its index.
  std::optional<int64_t> status, created_after, created_before;
  if (q.status) status = static_cast<int64_t>(*q.status);
  if (q.created_after) created_after = ToUnixMicros(*q.created_after);
  if (q.created_before) created_before = ToUnixMicros(*q.created_before);
  auto num = [](const std::optional<int64_t>& v) {
    return v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt;
  };
  std::optional<std::string> s = num(status), a = num(created_after), b = num(created_before);
  std::optional<std::string> ref = after ? num(after) : std::nullopt;
  pqxx::result r = db.Exec(
      "SELECT t.task_id, t.intent, s.status, t.created_at, s.updated_at, t.task_ref "
      "FROM tasks t JOIN task_status s ON s.task_ref = t.task_ref "
      "WHERE ($1::int IS NULL OR s.status = $1::int) AND ($2::text IS NULL OR t.intent = $2) "
      "AND ($3::bigint IS NULL OR t.created_at >= $3) "
      "AND ($4::bigint IS NULL OR t.created_at < $4) "
      "AND ($5::bigint IS NULL OR t.task_ref < $5) ORDER BY t.task_ref DESC LIMIT $6",
      OrNull(s), OrNull(q.intent), OrNull(a), OrNull(b), OrNull(ref),
      static_cast<int64_t>(q.limit) + 1);
  TaskPage page;
  int64_t last_ref = 0;
  for (const auto& row : r) {
    if (static_cast<int>(page.tasks.size()) == q.limit) {
      page.next_page_token = std::to_string(last_ref);
      break;
    }
    page.tasks.push_back({row[0].as<std::string>(), row[1].as<std::string>(),
                          static_cast<TaskState>(row[2].as<int>()),
                          FromUnixMicros(row[3].as<int64_t>()),
                          FromUnixMicros(row[4].as<int64_t>())});
    last_ref = row[5].as<int64_t>();
  }
  return page;
}

Result<std::vector<NodeRow>> QueryNodeTasks(ReadCtx& db, std::string_view node_id, int limit) {
  pqxx::result r = db.Exec(std::string("SELECT ") + kNodeRowColumns +
                               "WHERE tn.node_ref = (SELECT node_ref FROM nodes "
                               "WHERE node_id = $1) ORDER BY tn.task_ref DESC LIMIT $2",
                           CleanText(node_id), static_cast<int64_t>(limit));
  std::vector<NodeRow> out;
  for (const auto& row : r) out.push_back(ReadNodeRow(row));
  return out;
}

Result<std::vector<HistoryRow>> QueryHistory(ReadCtx& db, std::string_view task_id) {
  pqxx::result r = db.Exec(
      "SELECT h.hist_id, t.task_id, n.node_id, h.cause, h.outcome, h.seq, h.event_type, "
      "h.attempt, h.from_state, h.to_state, h.version, h.at, h.detail, "
      "COALESCE(p.body, h.payload) FROM tasks t "
      "JOIN history h ON h.task_ref = t.task_ref JOIN nodes n ON n.node_ref = h.node_ref "
      "LEFT JOIN payloads p ON p.payload_id = h.payload_ref "
      "WHERE t.task_id = $1 ORDER BY h.hist_id",
      CleanText(task_id));
  std::vector<HistoryRow> out;
  for (const auto& row : r) {
    HistoryRow h;
    h.id = row[0].as<int64_t>();
    h.task_id = row[1].as<std::string>();
    h.node_id = row[2].as<std::string>();
    h.cause = static_cast<Cause>(row[3].as<int>());
    h.outcome = static_cast<Outcome>(row[4].as<int>());
    if (!row[5].is_null()) h.event_id = MakeEventId(h.node_id, row[5].as<uint64_t>());
    if (!row[6].is_null()) h.event_type = static_cast<EventType>(row[6].as<int>());
    h.attempt = static_cast<uint32_t>(row[7].as<int64_t>());
    h.from = static_cast<TaskState>(row[8].as<int>());
    h.to = static_cast<TaskState>(row[9].as<int>());
    h.version = row[10].as<int64_t>();
    h.at = FromUnixMicros(row[11].as<int64_t>());
    h.detail = row[12].as<std::string>();
    h.payload = row[13].as<std::string>();
    out.push_back(std::move(h));
  }
  return out;
}

Result<std::vector<DueItem>> QueryDue(ReadCtx& db, TimePoint now, int limit) {
  pqxx::result r = db.Exec(
      "SELECT t.task_id, n.node_id, tn.due_kind, tn.due_at, tn.state, tn.version, tn.attempt, "
      "tn.retries, t.priority FROM task_nodes tn "
      "JOIN tasks t ON t.task_ref = tn.task_ref JOIN nodes n ON n.node_ref = tn.node_ref "
      "WHERE tn.due_at IS NOT NULL AND tn.due_at <= $1 ORDER BY tn.due_at, t.priority LIMIT $2",
      ToUnixMicros(now), static_cast<int64_t>(limit));
  std::vector<DueItem> out;
  for (const auto& row : r) {
    DueItem d;
    d.task_id = row[0].as<std::string>();
    d.node_id = row[1].as<std::string>();
    d.kind = static_cast<DueKind>(row[2].as<int>());
    d.due_at = FromUnixMicros(row[3].as<int64_t>());
    d.state = static_cast<TaskState>(row[4].as<int>());
    d.version = row[5].as<int64_t>();
    d.attempt = static_cast<uint32_t>(row[6].as<int64_t>());
    d.retries = row[7].as<int>();
    d.priority = static_cast<Priority>(row[8].as<int>());
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::string> QueryPayload(ReadCtx& db, int64_t ref) {
  pqxx::result r = db.Exec("SELECT body FROM payloads WHERE payload_id = $1", ref);
  if (r.empty()) return Status::NotFound("no payload " + std::to_string(ref));
  return r[0][0].as<std::string>();
}

}  // namespace apollo::store::postgres
