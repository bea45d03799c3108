// Node, selector, sequence, alert and dead-letter queries.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "store/sqlite/queries.h"

namespace apollo::store::sqlite {
namespace {

template <typename T>
T ParseJsonOr(const std::string& text, T fallback) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return fallback;
  try {
    return j.get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;  // a hand-edited row: show it empty rather than fail
  }
}

NodeInfo ReadNode(const Stmt& s) {
  NodeInfo n;
  n.node_id = s.Text(0);
  n.registered = s.Int(1) != 0;
  n.labels = ParseJsonOr<std::map<std::string, std::string>>(s.Text(2), {});
  n.groups = ParseJsonOr<std::vector<std::string>>(s.Text(3), {});
  n.intents = ParseJsonOr<std::vector<std::string>>(s.Text(4), {});
  n.mode = s.Text(5);
  n.agent_version = s.Text(6);
  if (!s.IsNull(7)) n.last_heartbeat = FromUnixMicros(s.Int(7));
  return n;
}

Result<DeadLetter> ReadLetter(const Stmt& s) {
  DeadLetter d;
  d.id = s.Int(0);
  nlohmann::json j = nlohmann::json::parse(s.Text(1), nullptr, false);
  Result<Event> e = EventFromJson(j);
  if (!e.ok()) return e.status().WithPrefix("dead letter " + std::to_string(d.id));
  d.event = std::move(*e);
  d.reason = s.Text(2);
  d.deliveries = static_cast<int>(s.Int(3));
  d.parked_at = FromUnixMicros(s.Int(4));
  return d;
}

constexpr const char* kLetterColumns =
    "SELECT letter_id, event_json, reason, deliveries, parked_at FROM dead_letters ";

}  // namespace

Result<uint64_t> QueryHighestSeq(Db& db, std::string_view node_id) {
  Result<Stmt*> st = db.Prepare(
      "SELECT s.hwm FROM nodes n JOIN node_seq s ON s.node_ref = n.node_ref WHERE n.node_id = ?1");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, node_id);
  Result<bool> row = s->Step();
  if (!row.ok()) return row.status();
  return *row ? static_cast<uint64_t>(s->Int(0)) : 0;
}

Result<std::vector<NodeInfo>> QueryNodes(Db& db) {
  Result<Stmt*> st = db.Prepare(
      "SELECT node_id, registered, labels, groups_json, intents_json, mode, agent_version, "
      "last_heartbeat FROM nodes ORDER BY node_id");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  std::vector<NodeInfo> out;
  for (;;) {
    Result<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(ReadNode(*s));
  }
}

Result<std::vector<std::string>> QuerySelector(Db& db, const TargetSelector& sel) {
  if (sel.type == SelectorType::kNodes) return sel.nodes;
  Result<std::vector<NodeInfo>> nodes = QueryNodes(db);
  if (!nodes.ok()) return nodes.status();
  std::vector<std::string> out;
  for (const NodeInfo& n : *nodes) {
    if (!n.registered) continue;
    bool match = false;
    if (sel.type == SelectorType::kLabel) {
      auto it = n.labels.find(sel.key);
      match = it != n.labels.end() && it->second == sel.value;
    } else {
      match = std::find(n.groups.begin(), n.groups.end(), sel.group) != n.groups.end();
    }
    if (match) out.push_back(n.node_id);
  }
  return out;
}

Result<std::vector<AlertRow>> QueryAlerts(Db& db, int64_t after_id, int limit) {
  Result<Stmt*> st = db.Prepare(
      "SELECT alert_id, kind, task_id, node_id, from_state, to_state, event_id, detail, at "
      "FROM alerts WHERE alert_id > ?1 ORDER BY alert_id LIMIT ?2");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, after_id).Bind(2, static_cast<int64_t>(limit));
  std::vector<AlertRow> out;
  for (;;) {
    Result<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    AlertRow a;
    a.id = s->Int(0);
    a.kind = s->Text(1);
    a.task_id = s->Text(2);
    a.node_id = s->Text(3);
    if (!s->IsNull(4)) a.from = static_cast<TaskState>(s->Int(4));
    if (!s->IsNull(5)) a.to = static_cast<TaskState>(s->Int(5));
    a.event_id = s->Text(6);
    a.detail = s->Text(7);
    a.at = FromUnixMicros(s->Int(8));
    out.push_back(std::move(a));
  }
}

Result<std::vector<DeadLetter>> QueryDeadLetters(Db& db, int64_t after_id, int limit) {
  Result<Stmt*> st =
      db.Prepare(std::string(kLetterColumns) + "WHERE letter_id > ?1 ORDER BY letter_id LIMIT ?2");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, after_id).Bind(2, static_cast<int64_t>(limit));
  std::vector<DeadLetter> out;
  for (;;) {
    Result<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<DeadLetter> d = ReadLetter(*s);
    if (!d.ok()) return d.status();
    out.push_back(std::move(*d));
  }
}

Result<DeadLetter> QueryDeadLetter(Db& db, int64_t id) {
  Result<Stmt*> st = db.Prepare(std::string(kLetterColumns) + "WHERE letter_id = ?1");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, id);
  Result<bool> row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no dead letter " + std::to_string(id));
  return ReadLetter(*s);
}

}  // namespace apollo::store::sqlite
