// Retention purge, the dead-letter table and orchestrator alerts (write side).
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "store/engine/seq.h"
#include "store/engine/write_paths.h"

namespace apollo::store::engine {
namespace {

constexpr sql::Statement kSettledTasks{
    "SELECT task_ref FROM task_status WHERE settled_at IS NOT NULL AND settled_at < $1 "
    "AND NOT follow "
    "ORDER BY settled_at LIMIT $2"};
constexpr sql::Column kRefCols[] = {{"task_ref", sql::Type::kInt}};
// A settled task, whole: what hangs off it first, the task row last.
constexpr sql::Statement kPurgeTaskPayloads{
    "DELETE FROM payloads AS x USING @rows WHERE x.task_ref = u.task_ref", kRefCols};
constexpr sql::Statement kPurgeTaskHistory{
    "DELETE FROM history AS x USING @rows WHERE x.task_ref = u.task_ref", kRefCols};
constexpr sql::Statement kPurgeTaskNodes{
    "DELETE FROM task_nodes AS x USING @rows WHERE x.task_ref = u.task_ref", kRefCols};
constexpr sql::Statement kPurgeTaskDeps{
    "DELETE FROM task_deps AS x USING @rows WHERE x.task_ref = u.task_ref", kRefCols};
constexpr sql::Statement kPurgeRollouts{
    "DELETE FROM rollouts AS x USING @rows WHERE x.task_ref = u.task_ref", kRefCols};
constexpr sql::Statement kPurgeTaskStatus{
    "DELETE FROM task_status AS x USING @rows WHERE x.task_ref = u.task_ref", kRefCols};
constexpr sql::Statement kPurgeTaskRows{
    "DELETE FROM tasks AS x USING @rows WHERE x.task_ref = u.task_ref", kRefCols};
constexpr sql::Statement kOldAbove{
    "SELECT node_ref, max(seq) FROM seq_above WHERE at < $1 GROUP BY node_ref"};
constexpr sql::Statement kPurgeAlerts{
    "DELETE FROM alerts WHERE alert_id IN "
    "(SELECT alert_id FROM alerts WHERE at < $1 ORDER BY alert_id LIMIT $2)"};
constexpr sql::Statement kPurgeLetters{
    "DELETE FROM dead_letters WHERE letter_id IN "
    "(SELECT letter_id FROM dead_letters WHERE parked_at < $1 ORDER BY letter_id LIMIT $2)"};
constexpr sql::Statement kPurgeAudit{
    "DELETE FROM audit WHERE audit_id IN "
    "(SELECT audit_id FROM audit WHERE at < $1 ORDER BY audit_id LIMIT $2)"};
constexpr sql::Statement kSetDelivery{
    "UPDATE alerts SET delivery = $2, attempts = $3, delivery_detail = $4, next_delivery_at = $5 "
    "WHERE alert_id = $1"};

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
  const int64_t now = txn.now_us();
  const int batch = std::max(policy.batch, 1);
  Result<sql::Rows> settled =
      txn.Query(kSettledTasks, sql::Params(now - policy.history_horizon.count(), batch));
  if (!settled.ok()) return settled.status();
  sql::RowSet tasks(kPurgeTaskPayloads);
  for (size_t i = 0; i < settled->size(); ++i) tasks.Add(settled->Int(i, 0));
  stats.tasks = static_cast<int64_t>(tasks.size());
  int64_t ignored = 0;
  txn.Exec(kPurgeTaskPayloads, {}, &tasks, nullptr, &stats.payload_rows);
  txn.Exec(kPurgeTaskHistory, {}, &tasks, nullptr, &stats.history_rows);
  for (const sql::Statement* s :
       {&kPurgeTaskNodes, &kPurgeTaskDeps, &kPurgeRollouts, &kPurgeTaskStatus, &kPurgeTaskRows}) {
    txn.Exec(*s, {}, &tasks, nullptr, &ignored);
  }
  txn.Exec(kPurgeAlerts, sql::Params(now - policy.alert_horizon.count(), batch), nullptr, nullptr,
           &stats.alert_rows);
  txn.Exec(kPurgeLetters, sql::Params(now - policy.dead_letter_horizon.count(), batch), nullptr,
           nullptr, &stats.dead_letters);
  txn.Exec(kPurgeAudit, sql::Params(now - policy.audit_horizon.count(), batch), nullptr, nullptr,
           &stats.audit_rows);
  APOLLO_RETURN_IF_ERROR(txn.Flush());
  APOLLO_RETURN_IF_ERROR(PurgeDedup(txn, now - policy.dedup_horizon.count(), stats));
  stats.more = stats.tasks >= batch || stats.alert_rows >= batch || stats.dead_letters >= batch ||
               stats.audit_rows >= batch;
  return stats;
}

Status SetDelivery(WriteTxn& txn, int64_t id, AlertDelivery delivery, int attempts,
                   std::string_view detail, std::optional<TimePoint> next_delivery_at) {
  std::optional<int64_t> next;
  if (next_delivery_at) next = ToUnixMicros(*next_delivery_at);
  Result<int64_t> n = txn.Count(kSetDelivery, sql::Params(id, delivery, attempts, detail, next));
  if (!n.ok()) return n.status();
  if (*n == 0) return Status::NotFound("no alert " + std::to_string(id));
  return Status::Ok();
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
