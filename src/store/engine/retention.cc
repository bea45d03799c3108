// Retention purge, the dead-letter table and orchestrator alerts (write side).
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "store/engine/seq.h"
#include "store/engine/write_paths.h"

namespace apollo::store::engine {
namespace {

constexpr sql::Statement kPurgePayloads{
    "DELETE FROM payloads WHERE payload_id IN (SELECT h.payload_ref FROM history h "
    "JOIN task_status t ON t.task_ref = h.task_ref WHERE t.settled_at IS NOT NULL "
    "AND t.settled_at < $1 AND h.at < $1 AND h.payload_ref IS NOT NULL)"};
constexpr sql::Statement kPurgeHistory{
    "DELETE FROM history WHERE task_ref IN (SELECT task_ref FROM task_status "
    "WHERE settled_at IS NOT NULL AND settled_at < $1) AND at < $1"};
constexpr sql::Statement kOldAbove{
    "SELECT node_ref, max(seq) FROM seq_above WHERE at < $1 GROUP BY node_ref"};
constexpr sql::Statement kPurgeAlerts{
    "DELETE FROM alerts WHERE at < $1 AND task_id NOT IN "
    "(SELECT t.task_id FROM tasks t JOIN task_status s ON s.task_ref = t.task_ref "
    "WHERE s.settled_at IS NULL)"};

constexpr sql::Statement kInsertLetter{
    "INSERT INTO dead_letters(event_json, reason, deliveries, parked_at) "
    "VALUES ($1, $2, $3, $4) RETURNING letter_id"};
constexpr sql::Statement kDeleteLetter{"DELETE FROM dead_letters WHERE letter_id = $1"};
constexpr sql::Statement kInsertAlert{
    "INSERT INTO alerts(kind, task_id, node_id, from_state, to_state, event_id, detail, at) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING alert_id"};

std::string SafeDump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Out-of-order dedup entries older than the cutoff: the gap below them is
// given up and the high-water mark moves past them.
Status PurgeDedup(WriteTxn& txn, int64_t cutoff, PurgeStats& stats) {
  sql::Params p(cutoff);
  Result<sql::Rows> r = txn.Query(kOldAbove, p);
  if (!r.ok()) return r.status();
  if (r->empty()) return Status::Ok();
  std::map<int64_t, uint64_t> old;  // node_ref -> highest old seq
  std::set<int64_t> refs;
  for (size_t i = 0; i < r->size(); ++i) {
    old[r->Int(i, 0)] = static_cast<uint64_t>(r->Int(i, 1));
    refs.insert(r->Int(i, 0));
  }
  Result<SeqMap> seqs = LockSeqs(txn, refs);
  if (!seqs.ok()) return seqs.status();
  for (auto& [ref, seq] : old) SkipTo((*seqs)[ref], seq);
  int64_t deleted = 0;
  FlushSeqs(txn, *seqs, &deleted);
  APOLLO_RETURN_IF_ERROR(txn.Flush());
  stats.dedup_rows += deleted;
  return Status::Ok();
}

}  // namespace

Result<PurgeStats> PurgeOld(WriteTxn& txn, const RetentionPolicy& policy) {
  PurgeStats stats;
  sql::Params cutoff(txn.now_us() - policy.history_horizon.count());
  Result<int64_t> n = txn.Count(kPurgePayloads, cutoff);
  if (!n.ok()) return n.status();
  stats.payload_rows = *n;
  n = txn.Count(kPurgeHistory, cutoff);
  if (!n.ok()) return n.status();
  stats.history_rows = *n;
  APOLLO_RETURN_IF_ERROR(PurgeDedup(txn, txn.now_us() - policy.dedup_horizon.count(), stats));
  n = txn.Count(kPurgeAlerts, cutoff);
  if (!n.ok()) return n.status();
  stats.alert_rows = *n;
  return stats;
}

Result<int64_t> InsertDeadLetter(WriteTxn& txn, const DeadLetter& letter) {
  sql::Params p(SafeDump(EventToJson(letter.event)), letter.reason, letter.deliveries,
                txn.now_us());
  Result<sql::Rows> r = txn.Query(kInsertLetter, p);
  if (!r.ok()) return r.status();
  return r->Int(0, 0);
}

Result<int64_t> InsertAlert(WriteTxn& txn, const AlertRow& alert) {
  sql::Params p(alert.kind, alert.task_id, alert.node_id, alert.from, alert.to, alert.event_id,
                alert.detail, txn.now_us());
  Result<sql::Rows> r = txn.Query(kInsertAlert, p);
  if (!r.ok()) return r.status();
  return r->Int(0, 0);
}

Status DeleteDeadLetter(WriteTxn& txn, int64_t id) {
  sql::Params p(id);
  Result<int64_t> n = txn.Count(kDeleteLetter, p);
  if (!n.ok()) return n.status();
  if (*n == 0) return Status::NotFound("no dead letter " + std::to_string(id));
  return Status::Ok();
}

}  // namespace apollo::store::engine
