// Node, selector, sequence, alert and dead-letter queries.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "store/engine/queries.h"

namespace apollo::store::engine {
namespace {

constexpr sql::Statement kHighestSeq{
    "SELECT s.hwm FROM nodes n JOIN node_seq s ON s.node_ref = n.node_ref WHERE n.node_id = $1"};
constexpr sql::Statement kNodes{
    "SELECT node_id, registered, labels, groups_json, intents_json, mode, agent_version, "
    "last_heartbeat, disabled_json FROM nodes ORDER BY node_id"};
constexpr sql::Statement kAlerts{
    "SELECT alert_id, kind, task_id, node_id, from_state, to_state, event_id, detail, at, "
    "delivery, attempts, delivery_detail, next_delivery_at "
    "FROM alerts WHERE alert_id > $1 ORDER BY alert_id LIMIT $2"};
constexpr sql::Statement kDueDeliveries{
    "SELECT alert_id, kind, task_id, node_id, from_state, to_state, event_id, detail, at, "
    "delivery, attempts, delivery_detail, next_delivery_at "
    "FROM alerts WHERE delivery IN (0, 2) AND (delivery = 0 OR next_delivery_at <= $1) "
    "ORDER BY alert_id LIMIT $2"};
constexpr sql::Statement kLetters{
    "SELECT letter_id, event_json, reason, deliveries, parked_at FROM dead_letters "
    "WHERE letter_id > $1 ORDER BY letter_id LIMIT $2"};
constexpr sql::Statement kLetter{
    "SELECT letter_id, event_json, reason, deliveries, parked_at FROM dead_letters "
    "WHERE letter_id = $1"};

template <typename T>
T ParseJsonOr(std::string_view text, T fallback) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return fallback;
  try {
    return j.get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;  // a hand-edited row: show it empty rather than fail
  }
}

NodeInfo ReadNode(sql::Rows& r, size_t i) {
  NodeInfo n;
  n.node_id = r.TakeText(i, 0);
  n.registered = r.Bool(i, 1);
  n.labels = ParseJsonOr<std::map<std::string, std::string>>(r.Text(i, 2), {});
  n.groups = ParseJsonOr<std::vector<std::string>>(r.Text(i, 3), {});
  n.intents = ParseJsonOr<std::vector<std::string>>(r.Text(i, 4), {});
  n.mode = r.TakeText(i, 5);
  n.agent_version = r.TakeText(i, 6);
  if (!r.IsNull(i, 7)) n.last_heartbeat = FromUnixMicros(r.Int(i, 7));
  n.disabled_intents = ParseJsonOr<std::vector<std::string>>(r.Text(i, 8), {});
  return n;
}

Result<DeadLetter> ReadLetter(const sql::Rows& r, size_t i) {
  DeadLetter d;
  d.id = r.Int(i, 0);
  nlohmann::json j = nlohmann::json::parse(r.Text(i, 1), nullptr, false);
  Result<Event> e = EventFromJson(j);
  if (!e.ok()) return e.status().WithPrefix("dead letter " + std::to_string(d.id));
  d.event = std::move(*e);
  d.reason = r.Text(i, 2);
  d.deliveries = static_cast<int>(r.Int(i, 3));
  d.parked_at = FromUnixMicros(r.Int(i, 4));
  return d;
}

sql::Params Page(int64_t after_id, int limit) {
  sql::Params p(after_id, limit);
  return p;
}

}  // namespace

Result<uint64_t> QueryHighestSeq(sql::Conn& db, std::string_view node_id) {
  sql::Params p(node_id);
  Result<sql::Rows> r = db.Query(kHighestSeq, p);
  if (!r.ok()) return r.status();
  return r->empty() ? uint64_t{0} : static_cast<uint64_t>(r->Int(0, 0));
}

Result<std::vector<NodeInfo>> QueryNodes(sql::Conn& db) {
  Result<sql::Rows> r = db.Query(kNodes);
  if (!r.ok()) return r.status();
  std::vector<NodeInfo> out;
  out.reserve(r->size());
  for (size_t i = 0; i < r->size(); ++i) out.push_back(ReadNode(*r, i));
  return out;
}

Result<std::vector<std::string>> QuerySelector(sql::Conn& db, const TargetSelector& sel) {
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

namespace {

std::vector<AlertRow> ReadAlerts(sql::Rows& r) {
  std::vector<AlertRow> out;
  out.reserve(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    AlertRow a;
    a.id = r.Int(i, 0);
    a.kind = r.TakeText(i, 1);
    a.task_id = r.TakeText(i, 2);
    a.node_id = r.TakeText(i, 3);
    if (!r.IsNull(i, 4)) a.from = static_cast<TaskState>(r.Int(i, 4));
    if (!r.IsNull(i, 5)) a.to = static_cast<TaskState>(r.Int(i, 5));
    a.event_id = r.TakeText(i, 6);
    a.detail = r.TakeText(i, 7);
    a.at = FromUnixMicros(r.Int(i, 8));
    a.delivery = static_cast<AlertDelivery>(r.Int(i, 9));
    a.attempts = static_cast<int>(r.Int(i, 10));
    a.delivery_detail = r.TakeText(i, 11);
    if (!r.IsNull(i, 12)) a.next_delivery_at = FromUnixMicros(r.Int(i, 12));
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

Result<std::vector<AlertRow>> QueryAlerts(sql::Conn& db, int64_t after_id, int limit) {
  Result<sql::Rows> r = db.Query(kAlerts, Page(after_id, limit));
  if (!r.ok()) return r.status();
  return ReadAlerts(*r);
}

Result<std::vector<AlertRow>> QueryDueDeliveries(sql::Conn& db, TimePoint now, int limit) {
  Result<sql::Rows> r = db.Query(kDueDeliveries, sql::Params(ToUnixMicros(now), limit));
  if (!r.ok()) return r.status();
  return ReadAlerts(*r);
}

Result<std::vector<DeadLetter>> QueryDeadLetters(sql::Conn& db, int64_t after_id, int limit) {
  Result<sql::Rows> r = db.Query(kLetters, Page(after_id, limit));
  if (!r.ok()) return r.status();
  std::vector<DeadLetter> out;
  for (size_t i = 0; i < r->size(); ++i) {
    Result<DeadLetter> d = ReadLetter(*r, i);
    if (!d.ok()) return d.status();
    out.push_back(std::move(*d));
  }
  return out;
}

Result<DeadLetter> QueryDeadLetter(sql::Conn& db, int64_t id) {
  sql::Params p(id);
  Result<sql::Rows> r = db.Query(kLetter, p);
  if (!r.ok()) return r.status();
  if (r->empty()) return Status::NotFound("no dead letter " + std::to_string(id));
  return ReadLetter(*r, 0);
}

}  // namespace apollo::store::engine
