// Node, selector, sequence, alert and dead-letter queries.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "store/postgres/queries.h"

namespace apollo::store::postgres {
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

NodeInfo ReadNode(const pqxx::row& s) {
  NodeInfo n;
  n.node_id = s[0].as<std::string>();
  n.registered = s[1].as<bool>();
  n.labels = ParseJsonOr<std::map<std::string, std::string>>(s[2].as<std::string>(), {});
  n.groups = ParseJsonOr<std::vector<std::string>>(s[3].as<std::string>(), {});
  n.intents = ParseJsonOr<std::vector<std::string>>(s[4].as<std::string>(), {});
  n.mode = s[5].as<std::string>();
  n.agent_version = s[6].as<std::string>();
  if (!s[7].is_null()) n.last_heartbeat = FromUnixMicros(s[7].as<int64_t>());
  return n;
}

Result<DeadLetter> ReadLetter(const pqxx::row& s) {
  DeadLetter d;
  d.id = s[0].as<int64_t>();
  nlohmann::json j = nlohmann::json::parse(s[1].as<std::string>(), nullptr, false);
  Result<Event> e = EventFromJson(j);
  if (!e.ok()) return e.status().WithPrefix("dead letter " + std::to_string(d.id));
  d.event = std::move(*e);
  d.reason = s[2].as<std::string>();
  d.deliveries = s[3].as<int>();
  d.parked_at = FromUnixMicros(s[4].as<int64_t>());
  return d;
}

constexpr const char* kLetterColumns =
    "SELECT letter_id, event_json, reason, deliveries, parked_at FROM dead_letters ";

}  // namespace

Result<uint64_t> QueryHighestSeq(ReadCtx& db, std::string_view node_id) {
  pqxx::result r = db.Exec(
      "SELECT s.hwm FROM nodes n JOIN node_seq s ON s.node_ref = n.node_ref "
      "WHERE n.node_id = $1",
      CleanText(node_id));
  return r.empty() ? uint64_t{0} : static_cast<uint64_t>(r[0][0].as<int64_t>());
}

Result<std::vector<NodeInfo>> QueryNodes(ReadCtx& db) {
  pqxx::result r = db.Exec(
      "SELECT node_id, registered, labels, groups_json, intents_json, mode, agent_version, "
      "last_heartbeat FROM nodes ORDER BY node_id");
  std::vector<NodeInfo> out;
  for (const auto& row : r) out.push_back(ReadNode(row));
  return out;
}

Result<std::vector<std::string>> QuerySelector(ReadCtx& db, const TargetSelector& sel) {
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

Result<std::vector<AlertRow>> QueryAlerts(ReadCtx& db, int64_t after_id, int limit) {
  pqxx::result r = db.Exec(
      "SELECT alert_id, kind, task_id, node_id, from_state, to_state, event_id, detail, at "
      "FROM alerts WHERE alert_id > $1 ORDER BY alert_id LIMIT $2",
      after_id, static_cast<int64_t>(limit));
  std::vector<AlertRow> out;
  for (const auto& s : r) {
    AlertRow a;
    a.id = s[0].as<int64_t>();
    a.kind = s[1].as<std::string>();
    a.task_id = s[2].as<std::string>();
    a.node_id = s[3].as<std::string>();
    if (!s[4].is_null()) a.from = static_cast<TaskState>(s[4].as<int>());
    if (!s[5].is_null()) a.to = static_cast<TaskState>(s[5].as<int>());
    a.event_id = s[6].as<std::string>();
    a.detail = s[7].as<std::string>();
    a.at = FromUnixMicros(s[8].as<int64_t>());
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<DeadLetter>> QueryDeadLetters(ReadCtx& db, int64_t after_id, int limit) {
  pqxx::result r = db.Exec(std::string(kLetterColumns) +
                               "WHERE letter_id > $1 ORDER BY letter_id LIMIT $2",
                           after_id, static_cast<int64_t>(limit));
  std::vector<DeadLetter> out;
  for (const auto& row : r) {
    Result<DeadLetter> d = ReadLetter(row);
    if (!d.ok()) return d.status();
    out.push_back(std::move(*d));
  }
  return out;
}

Result<DeadLetter> QueryDeadLetter(ReadCtx& db, int64_t id) {
  pqxx::result r = db.Exec(std::string(kLetterColumns) + "WHERE letter_id = $1", id);
  if (r.empty()) return Status::NotFound("no dead letter " + std::to_string(id));
  return ReadLetter(r[0]);
}

}  // namespace apollo::store::postgres
