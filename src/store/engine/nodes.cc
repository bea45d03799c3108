#include "store/engine/nodes.h"

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace apollo::store::engine {
namespace {

constexpr sql::Column kIdCols[] = {{"node_id", sql::Type::kText}};
constexpr sql::Statement kInsertNodes{
    "INSERT INTO nodes(node_id, registered, updated_at) SELECT u.node_id, false, $1 FROM @rows "
    "WHERE true ON CONFLICT (node_id) DO NOTHING",
    kIdCols};
constexpr sql::Statement kInsertSeqs{
    "INSERT INTO node_seq(node_ref, hwm, n_above) SELECT n.node_ref, 0, 0 FROM nodes n, @rows "
    "WHERE n.node_id = u.node_id ON CONFLICT (node_ref) DO NOTHING",
    kIdCols};

constexpr sql::Statement kUpsertNode{
    "INSERT INTO nodes(node_id, registered, labels, groups_json, intents_json, mode, "
    "agent_version, last_heartbeat, updated_at, disabled_json) "
    "VALUES ($1, true, $2, $3, $4, $5, $6, $7, $8, $9) "
    "ON CONFLICT (node_id) DO UPDATE SET registered = true, labels = excluded.labels, "
    "groups_json = excluded.groups_json, intents_json = excluded.intents_json, "
    "mode = excluded.mode, agent_version = excluded.agent_version, "
    "disabled_json = excluded.disabled_json, "
    "last_heartbeat = excluded.last_heartbeat, updated_at = excluded.updated_at "
    "RETURNING node_ref"};
constexpr sql::Statement kEnsureSeq{
    "INSERT INTO node_seq(node_ref, hwm, n_above) VALUES ($1, 0, 0) "
    "ON CONFLICT (node_ref) DO NOTHING"};
constexpr sql::Statement kClearUnregistered{
    "UPDATE task_nodes SET blocked_reason = '' WHERE node_ref = $1 AND state = $2 "
    "AND blocked_reason = 'node_not_registered'"};

constexpr sql::Column kBeatCols[] = {
    {"id", sql::Type::kText}, {"at", sql::Type::kInt}, {"mode", sql::Type::kText}};
constexpr sql::Statement kBeats{
    "UPDATE nodes SET last_heartbeat = u.at, "
    "mode = CASE WHEN u.mode = '' THEN nodes.mode ELSE u.mode END, updated_at = $1 "
    "FROM @rows WHERE nodes.node_id = u.id AND nodes.registered RETURNING node_id",
    kBeatCols};

// JSON text that never throws: invalid UTF-8 (an agent's label) is replaced
// rather than aborting the writer.
std::string SafeDump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

Result<NodeFacts> EnsureNodes(WriteTxn& txn, const std::set<std::string>& ids) {
  std::vector<std::string> all(ids.begin(), ids.end());
  Result<NodeFacts> found = txn.FindNodes(all, /*fresh_registration=*/true);
  if (!found.ok()) return found.status();
  sql::RowSet missing(kInsertNodes);
  std::vector<std::string> missing_ids;
  for (const std::string& id : ids) {
    if (!found->count(id)) {
      missing.Add(id);
      missing_ids.push_back(id);
    }
  }
  if (missing_ids.empty()) return found;
  sql::Params at(txn.now_us());
  txn.Exec(kInsertNodes, at, &missing);
  sql::RowSet seqs(kInsertSeqs);
  for (const std::string& id : missing_ids) seqs.Add(id);
  txn.Exec(kInsertSeqs, {}, &seqs);
  Result<NodeFacts> made = txn.FindNodes(missing_ids);
  if (!made.ok()) return made.status();
  for (auto& [id, fact] : *made) (*found)[id] = fact;
  for (const std::string& id : missing_ids) {
    if (!found->count(id)) return Status::Internal("node " + id + " was not created");
  }
  return found;
}

Status WriteNode(WriteTxn& txn, const NodeInfo& node) {
  if (node.node_id.empty()) return Status::InvalidArgument("node without node_id");
  std::optional<int64_t> hb;
  if (node.last_heartbeat) hb = ToUnixMicros(*node.last_heartbeat);
  sql::Params p(node.node_id, SafeDump(nlohmann::json(node.labels)),
                SafeDump(nlohmann::json(node.groups)), SafeDump(nlohmann::json(node.intents)),
                node.mode, node.agent_version, hb, txn.now_us(),
                SafeDump(nlohmann::json(node.disabled_intents)));
  Result<sql::Rows> r = txn.Query(kUpsertNode, p);
  if (!r.ok()) return r.status();
  if (r->empty()) return Status::Internal("upsert returned no node_ref");
  int64_t ref = r->Int(0, 0);
  txn.Exec(kEnsureSeq, sql::Params(ref));
  txn.RememberNode(node.node_id, NodeFact{ref, true});
  txn.Exec(kClearUnregistered, sql::Params(ref, TaskState::kPending));
  return Status::Ok();
}

Result<int> WriteHeartbeats(WriteTxn& txn, std::span<const NodeHeartbeat> beats) {
  std::map<std::string, const NodeHeartbeat*> latest;
  for (const NodeHeartbeat& b : beats) latest[b.node_id] = &b;
  sql::RowSet rows(kBeats);
  for (const auto& [id, b] : latest) rows.Add(id, ToUnixMicros(b->at), b->mode);
  sql::Params now(txn.now_us());
  Result<sql::Rows> r = txn.Query(kBeats, now, &rows);
  if (!r.ok()) return r.status();
  return static_cast<int>(r->size());
}

}  // namespace apollo::store::engine
