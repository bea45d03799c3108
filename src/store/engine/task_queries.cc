// Task, history and due-work queries.
#include <array>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "store/engine/queries.h"

namespace apollo::store::engine {
namespace {

#define APOLLO_NODE_ROW_COLUMNS                                                         \
  "t.task_id, n.node_id, tn.state, tn.version, tn.attempt, tn.retries, tn.created_at, " \
  "tn.updated_at, tn.last_error, COALESCE(p.body, tn.result), tn.result_ref, "          \
  "tn.blocked_reason, tn.due_kind, tn.due_at, tn.start_deadline, tn.extensions, "       \
  "tn.permanent, tn.batch "                                                             \
  "FROM task_nodes tn JOIN tasks t ON t.task_ref = tn.task_ref "                        \
  "JOIN nodes n ON n.node_ref = tn.node_ref "                                           \
  "LEFT JOIN payloads p ON p.payload_id = tn.result_ref "

constexpr sql::Statement kTask{
    "SELECT t.task_ref, t.spec, s.status, t.created_at, s.updated_at, s.start_timeout_us, "
    "s.held_by "
    "FROM tasks t "
    "JOIN task_status s ON s.task_ref = t.task_ref WHERE t.task_id = $1"};
constexpr sql::Statement kTaskRows{"SELECT " APOLLO_NODE_ROW_COLUMNS
                                   "WHERE tn.task_ref = $1 ORDER BY n.node_id"};
constexpr sql::Statement kNodeTasks{
    "SELECT " APOLLO_NODE_ROW_COLUMNS
    "WHERE tn.node_ref = (SELECT node_ref FROM nodes WHERE node_id = $1) "
    "ORDER BY tn.task_ref DESC LIMIT $2"};
constexpr sql::Statement kHistory{
    "SELECT h.hist_id, t.task_id, COALESCE(n.node_id, ''), h.cause, h.outcome, h.seq, "
    "h.event_type, "
    "h.attempt, h.from_state, h.to_state, h.version, h.at, h.detail, "
    "COALESCE(p.body, h.payload), h.epoch FROM tasks t "
    "JOIN history h ON h.task_ref = t.task_ref LEFT JOIN nodes n ON n.node_ref = h.node_ref "
    "LEFT JOIN payloads p ON p.payload_id = h.payload_ref "
    "WHERE t.task_id = $1 ORDER BY h.hist_id"};
// One priority at a time (high first), each an index range scan of
// (priority, due_at): after an outage the backlog drains high first.
constexpr sql::Statement kDue{
    "SELECT t.task_id, n.node_id, tn.due_kind, tn.due_at, tn.state, tn.version, tn.attempt, "
    "tn.retries, tn.priority, tn.start_deadline, tn.extensions, tn.blocked_reason "
    "FROM task_nodes tn /*@sqlite INDEXED BY task_nodes_due*/ "
    "JOIN tasks t ON t.task_ref = tn.task_ref JOIN nodes n ON n.node_ref = tn.node_ref "
    "WHERE tn.priority = $1 AND tn.due_at IS NOT NULL AND tn.due_at <= $2 "
    "ORDER BY tn.due_at LIMIT $3"};
// Its dependencies now (an operator may have changed them since the submit).
constexpr sql::Statement kTaskDeps{
    "SELECT t.task_id FROM task_deps d JOIN tasks t ON t.task_ref = d.dep_ref "
    "WHERE d.task_ref = $1"};
constexpr sql::Statement kPayload{"SELECT body FROM payloads WHERE payload_id = $1"};
// From the partial index of the queue (schema.cc: task_nodes_queued), so the
// once-a-second count costs the queue's size, not the retained rows'. The
// states are written out: an index's WHERE must be implied by the query's
// own text (SQLite) or plan (PostgreSQL), which bound parameters are not.
static_assert(static_cast<int>(TaskState::kPending) == 0 &&
              static_cast<int>(TaskState::kDispatched) == 1 &&
              static_cast<int>(TaskState::kRetrying) == 5);
constexpr sql::Statement kQueueDepth{
    "SELECT count(*) FROM task_nodes /*@sqlite INDEXED BY task_nodes_queued*/ "
    "WHERE state IN (0, 1, 5)"};

#undef APOLLO_NODE_ROW_COLUMNS

NodeRow ReadNodeRow(sql::Rows& r, size_t i) {
  NodeRow n;
  n.task_id = r.TakeText(i, 0);
  n.node_id = r.TakeText(i, 1);
  n.state = static_cast<TaskState>(r.Int(i, 2));
  n.version = r.Int(i, 3);
  n.attempt = static_cast<uint32_t>(r.Int(i, 4));
  n.retries = static_cast<int>(r.Int(i, 5));
  n.created_at = FromUnixMicros(r.Int(i, 6));
  n.updated_at = FromUnixMicros(r.Int(i, 7));
  n.last_error = r.TakeText(i, 8);
  n.result = r.TakeText(i, 9);
  n.result_ref = r.OptInt(i, 10);
  n.blocked_reason = r.TakeText(i, 11);
  n.due_kind = static_cast<DueKind>(r.Int(i, 12));
  if (!r.IsNull(i, 13)) n.due_at = FromUnixMicros(r.Int(i, 13));
  if (!r.IsNull(i, 14)) n.start_deadline = FromUnixMicros(r.Int(i, 14));
  n.extensions = static_cast<int>(r.Int(i, 15));
  n.permanent = r.Bool(i, 16);
  n.batch = static_cast<int>(r.Int(i, 17));
  return n;
}

// ListTasks' filters: only those present are in the SQL, so each shape uses
// its index. One statement per combination (and number of metadata
// filters), made once, on first use.
enum TaskFilter : unsigned {
  kByStatus = 1,
  kByIntent = 2,
  kCreatedAfter = 4,
  kCreatedBefore = 8,
  kAfterRef = 16,
  kFilterShapes = 32,
};

const sql::Statement& TasksStatement(unsigned shape, size_t metadata) {
  struct Made {
    std::array<std::string, kFilterShapes*(kMaxMetadataFilters + 1)> texts;
    std::array<sql::Statement, kFilterShapes*(kMaxMetadataFilters + 1)> stmts;
  };
  static auto* made = [] {
    auto* m = new Made;  // lives for the process: drivers key on its address
    for (size_t meta = 0; meta <= kMaxMetadataFilters; ++meta) {
      for (unsigned f = 0; f < kFilterShapes; ++f) {
        std::string s =
            "SELECT t.task_id, t.intent, s.status, t.created_at, s.updated_at, t.task_ref, t.spec "
            "FROM tasks t JOIN task_status s ON s.task_ref = t.task_ref WHERE true";
        int n = 0;
        auto next = [&n] { return "$" + std::to_string(++n); };
        if (f & kByStatus) s += " AND s.status = " + next();
        if (f & kByIntent) s += " AND t.intent = " + next();
        if (f & kCreatedAfter) s += " AND t.created_at >= " + next();
        if (f & kCreatedBefore) s += " AND t.created_at < " + next();
        if (f & kAfterRef) s += " AND t.task_ref < " + next();
        for (size_t k = 0; k < meta; ++k) {
          std::string key = next();
          s += " AND /*@sqlite json_extract(t.spec, '$.metadata.' || json_quote(" + key +
               "))*//*@pg (t.spec::jsonb -> 'metadata' ->> " + key + ")*/ = " + next();
        }
        s += " ORDER BY t.task_ref DESC LIMIT " + next();
        size_t i = meta * kFilterShapes + f;
        m->texts[i] = std::move(s);
        m->stmts[i] = sql::Statement{m->texts[i].c_str()};
      }
    }
    return m;
  }();
  return made->stmts[metadata * kFilterShapes + shape];
}

std::map<std::string, std::string> MetadataOf(std::string_view spec_json) {
  nlohmann::json j = nlohmann::json::parse(spec_json, nullptr, false);
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  auto it = j.find("metadata");
  if (it == j.end() || !it->is_object()) return out;
  for (const auto& [k, v] : it->items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

Result<TaskRow> QueryTask(sql::Conn& db, std::string_view task_id) {
  sql::Params p(task_id);
  Result<sql::Rows> t = db.Query(kTask, p);
  if (!t.ok()) return t.status();
  if (t->empty()) return Status::NotFound("no task " + std::string(task_id));
  TaskRow task;
  nlohmann::json j = nlohmann::json::parse(t->Text(0, 1), nullptr, false);
  Result<TaskSpec> spec = SpecFromJson(j);
  if (!spec.ok()) return spec.status().WithPrefix("stored spec of " + std::string(task_id));
  task.spec = std::move(*spec);
  task.status = static_cast<TaskState>(t->Int(0, 2));
  task.created_at = FromUnixMicros(t->Int(0, 3));
  task.updated_at = FromUnixMicros(t->Int(0, 4));
  task.start_timeout =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::microseconds(t->Int(0, 5)));
  task.held_by = t->TakeText(0, 6);
  const int64_t task_ref = t->Int(0, 0);
  Result<sql::Rows> rows = db.Query(kTaskRows, sql::Params(task_ref));
  if (!rows.ok()) return rows.status();
  for (size_t i = 0; i < rows->size(); ++i) task.nodes.push_back(ReadNodeRow(*rows, i));
  Result<sql::Rows> deps = db.Query(kTaskDeps, sql::Params(task_ref));
  if (!deps.ok()) return deps.status();
  std::set<std::string> now;
  for (size_t i = 0; i < deps->size(); ++i) now.insert(deps->TakeText(i, 0));
  // As written, less those removed, then those added (in id order).
  std::vector<std::string> current;
  for (const std::string& d : task.spec.depends_on) {
    if (now.erase(d)) current.push_back(d);
  }
  current.insert(current.end(), now.begin(), now.end());
  task.spec.depends_on = std::move(current);
  if (task.spec.rollout) {
    Result<std::optional<RolloutRow>> r = QueryRolloutOf(db, task_ref);
    if (!r.ok()) return r.status();
    task.rollout = std::move(*r);
  }
  return task;
}

Result<TaskPage> QueryTasks(sql::Conn& db, const TaskQuery& q) {
  if (q.limit < 1 || q.limit > 1000) return Status::InvalidArgument("limit must be 1..1000");
  int64_t after = 0;
  if (!q.page_token.empty()) {
    char* end = nullptr;
    after = std::strtoll(q.page_token.c_str(), &end, 10);
    if (*end != '\0' || after <= 0) return Status::InvalidArgument("bad page token");
  }
  unsigned shape = 0;
  sql::Params p;
  if (q.status) shape |= kByStatus, p.Add(*q.status);
  if (q.intent) shape |= kByIntent, p.Add(*q.intent);
  if (q.created_after) shape |= kCreatedAfter, p.Add(ToUnixMicros(*q.created_after));
  if (q.created_before) shape |= kCreatedBefore, p.Add(ToUnixMicros(*q.created_before));
  if (after) shape |= kAfterRef, p.Add(after);
  if (q.metadata.size() > kMaxMetadataFilters) {
    return Status::InvalidArgument("at most " + std::to_string(kMaxMetadataFilters) +
                                   " metadata filters");
  }
  for (const auto& [k, v] : q.metadata) p.Add(k, v);
  p.Add(q.limit + 1);
  Result<sql::Rows> r = db.Query(TasksStatement(shape, q.metadata.size()), p);
  if (!r.ok()) return r.status();
  TaskPage page;
  int64_t last_ref = 0;
  for (size_t i = 0; i < r->size(); ++i) {
    if (static_cast<int>(page.tasks.size()) == q.limit) {
      page.next_page_token = std::to_string(last_ref);
      break;
    }
    page.tasks.push_back({r->TakeText(i, 0), r->TakeText(i, 1),
                          static_cast<TaskState>(r->Int(i, 2)), FromUnixMicros(r->Int(i, 3)),
                          FromUnixMicros(r->Int(i, 4)), MetadataOf(r->Text(i, 6))});
    last_ref = r->Int(i, 5);
  }
  return page;
}

Result<std::vector<NodeRow>> QueryNodeTasks(sql::Conn& db, std::string_view node_id, int limit) {
  sql::Params p(node_id, limit);
  Result<sql::Rows> r = db.Query(kNodeTasks, p);
  if (!r.ok()) return r.status();
  std::vector<NodeRow> out;
  for (size_t i = 0; i < r->size(); ++i) out.push_back(ReadNodeRow(*r, i));
  return out;
}

Result<std::vector<HistoryRow>> QueryHistory(sql::Conn& db, std::string_view task_id) {
  sql::Params p(task_id);
  Result<sql::Rows> r = db.Query(kHistory, p);
  if (!r.ok()) return r.status();
  std::vector<HistoryRow> out;
  out.reserve(r->size());
  for (size_t i = 0; i < r->size(); ++i) {
    HistoryRow h;
    h.id = r->Int(i, 0);
    h.task_id = r->TakeText(i, 1);
    h.node_id = r->TakeText(i, 2);
    h.cause = static_cast<Cause>(r->Int(i, 3));
    h.outcome = static_cast<Outcome>(r->Int(i, 4));
    if (!r->IsNull(i, 5)) h.event_id = MakeEventId(h.node_id, static_cast<uint64_t>(r->Int(i, 5)));
    if (!r->IsNull(i, 6)) h.event_type = static_cast<EventType>(r->Int(i, 6));
    h.attempt = static_cast<uint32_t>(r->Int(i, 7));
    h.from = static_cast<TaskState>(r->Int(i, 8));
    h.to = static_cast<TaskState>(r->Int(i, 9));
    h.version = r->Int(i, 10);
    h.at = FromUnixMicros(r->Int(i, 11));
    h.detail = r->TakeText(i, 12);
    h.payload = r->TakeText(i, 13);
    h.epoch = r->Int(i, 14);
    out.push_back(std::move(h));
  }
  return out;
}

Result<std::vector<DueItem>> QueryDue(sql::Conn& db, TimePoint now, int limit) {
  std::vector<DueItem> out;
  for (Priority p : {Priority::kHigh, Priority::kNormal, Priority::kLow}) {
    const int left = limit - static_cast<int>(out.size());
    if (left <= 0) break;
    Result<sql::Rows> r = db.Query(kDue, sql::Params(p, ToUnixMicros(now), left));
    if (!r.ok()) return r.status();
    for (size_t i = 0; i < r->size(); ++i) {
      DueItem d;
      d.task_id = r->TakeText(i, 0);
      d.node_id = r->TakeText(i, 1);
      d.kind = static_cast<DueKind>(r->Int(i, 2));
      d.due_at = FromUnixMicros(r->Int(i, 3));
      d.state = static_cast<TaskState>(r->Int(i, 4));
      d.version = r->Int(i, 5);
      d.attempt = static_cast<uint32_t>(r->Int(i, 6));
      d.retries = static_cast<int>(r->Int(i, 7));
      d.priority = static_cast<Priority>(r->Int(i, 8));
      if (!r->IsNull(i, 9)) d.start_deadline = FromUnixMicros(r->Int(i, 9));
      d.extensions = static_cast<int>(r->Int(i, 10));
      if (!r->IsNull(i, 11)) d.blocked_reason = r->TakeText(i, 11);
      out.push_back(std::move(d));
    }
  }
  return out;
}

Result<std::string> QueryPayload(sql::Conn& db, int64_t ref) {
  sql::Params p(ref);
  Result<sql::Rows> r = db.Query(kPayload, p);
  if (!r.ok()) return r.status();
  if (r->empty()) return Status::NotFound("no payload " + std::to_string(ref));
  return r->TakeText(0, 0);
}

Result<int64_t> QueryQueueDepth(sql::Conn& db) {
  Result<sql::Rows> r = db.Query(kQueueDepth);
  if (!r.ok()) return r.status();
  return r->empty() ? int64_t{0} : r->Int(0, 0);
}

}  // namespace apollo::store::engine
