// Retention purge, the dead-letter table and orchestrator alerts (write side).
#include <map>

#include <nlohmann/json.hpp>

#include "store/postgres/rows.h"
#include "store/postgres/seq.h"
#include "store/postgres/write_paths.h"

namespace apollo::store::postgres {
namespace {

// History (and its side payloads) of tasks settled before the cutoff.
void PurgeHistory(WriteTxn& txn, int64_t cutoff, PurgeStats& stats) {
  pqxx::result p = txn.Exec(
      "DELETE FROM payloads WHERE payload_id IN (SELECT h.payload_ref FROM history h "
      "JOIN task_status t ON t.task_ref = h.task_ref WHERE t.settled_at IS NOT NULL "
      "AND t.settled_at < $1 AND h.at < $1 AND h.payload_ref IS NOT NULL)",
      cutoff);
  stats.payload_rows += static_cast<int64_t>(p.affected_rows());
  pqxx::result h = txn.Exec(
      "DELETE FROM history h USING task_status t WHERE h.task_ref = t.task_ref "
      "AND t.settled_at IS NOT NULL AND t.settled_at < $1 AND h.at < $1",
      cutoff);
  stats.history_rows += static_cast<int64_t>(h.affected_rows());
}

// Out-of-order dedup entries older than the cutoff: the gap below them is
// given up and the high-water mark moves past them.
void PurgeDedup(WriteTxn& txn, int64_t cutoff, PurgeStats& stats) {
  std::map<int64_t, uint64_t> old;  // node_ref -> highest old seq
  for (const auto& row : txn.Exec("SELECT node_ref, max(seq) FROM seq_above WHERE at < $1 "
                                  "GROUP BY node_ref",
                                  cutoff)) {
    old[row[0].as<int64_t>()] = static_cast<uint64_t>(row[1].as<int64_t>());
  }
  if (old.empty()) return;
  std::set<int64_t> refs;
  for (const auto& [ref, seq] : old) refs.insert(ref);
  SeqMap seqs = LockSeqs(txn, refs);
  for (auto& [ref, seq] : old) SkipTo(seqs[ref], seq);
  stats.dedup_rows += FlushSeqs(txn, seqs, /*with_marks=*/true);
}

}  // namespace

Result<PurgeStats> PurgeOld(WriteTxn& txn, const RetentionPolicy& policy) {
  PurgeStats stats;
  int64_t history_cutoff = txn.now_us() - policy.history_horizon.count();
  PurgeHistory(txn, history_cutoff, stats);
  PurgeDedup(txn, txn.now_us() - policy.dedup_horizon.count(), stats);
  pqxx::result a = txn.Exec(
      "DELETE FROM alerts WHERE at < $1 AND task_id NOT IN "
      "(SELECT t.task_id FROM tasks t JOIN task_status s ON s.task_ref = t.task_ref "
      "WHERE s.settled_at IS NULL)",
      history_cutoff);
  stats.alert_rows = static_cast<int64_t>(a.affected_rows());
  return stats;
}

Result<int64_t> InsertDeadLetter(WriteTxn& txn, const DeadLetter& letter) {
  pqxx::result r = txn.Exec(
      "INSERT INTO dead_letters(event_json, reason, deliveries, parked_at) "
      "VALUES ($1, $2, $3, $4) RETURNING letter_id",
      SafeDump(EventToJson(letter.event)), CleanText(letter.reason), letter.deliveries,
      txn.now_us());
  return r[0][0].as<int64_t>();
}

Result<int64_t> InsertAlert(WriteTxn& txn, const AlertRow& alert) {
  // -1 stands for "no state" (NULL), which keeps the parameters plain.
  auto state = [](const std::optional<TaskState>& s) {
    return s ? static_cast<int64_t>(*s) : int64_t{-1};
  };
  pqxx::result r = txn.Exec(
      "INSERT INTO alerts(kind, task_id, node_id, from_state, to_state, event_id, detail, at) "
      "VALUES ($1, $2, $3, NULLIF($4, -1), NULLIF($5, -1), $6, $7, $8) RETURNING alert_id",
      CleanText(alert.kind), CleanText(alert.task_id), CleanText(alert.node_id),
      state(alert.from), state(alert.to), CleanText(alert.event_id), CleanText(alert.detail),
      txn.now_us());
  return r[0][0].as<int64_t>();
}

Status DeleteDeadLetter(WriteTxn& txn, int64_t id) {
  pqxx::result r = txn.Exec("DELETE FROM dead_letters WHERE letter_id = $1", id);
  if (r.affected_rows() == 0) return Status::NotFound("no dead letter " + std::to_string(id));
  return Status::Ok();
}

}  // namespace apollo::store::postgres
