// Retention purge, the dead-letter table and orchestrator alerts (write side).
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite/row_ops.h"
#include "store/sqlite/write_paths.h"

namespace apollo::store::sqlite {
namespace {

Result<int64_t> RunCounting(WriteTxn& txn, const std::string& sql, int64_t a, int64_t b) {
  Result<Stmt*> st = txn.db().Prepare(sql);
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, a).Bind(2, b);
  APOLLO_RETURN_IF_ERROR(s->Run());
  return txn.db().Changes();
}

// History (and its side payloads) of tasks settled before the cutoff.
Status PurgeHistory(WriteTxn& txn, int64_t cutoff, PurgeStats& stats) {
  std::vector<int64_t> tasks;
  {
    Result<Stmt*> st = txn.db().Prepare(
        "SELECT task_ref FROM tasks WHERE settled_at IS NOT NULL AND settled_at < ?1");
    if (!st.ok()) return st.status();
    StmtRef s(*st);
    s->Bind(1, cutoff);
    for (;;) {
      Result<bool> row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      tasks.push_back(s->Int(0));
    }
  }
  for (int64_t ref : tasks) {
    Result<int64_t> n = RunCounting(
        txn,
        "DELETE FROM payloads WHERE payload_id IN (SELECT payload_ref FROM history "
        "WHERE task_ref = ?1 AND at < ?2 AND payload_ref IS NOT NULL)",
        ref, cutoff);
    if (!n.ok()) return n.status();
    stats.payload_rows += *n;
    n = RunCounting(txn, "DELETE FROM history WHERE task_ref = ?1 AND at < ?2", ref, cutoff);
    if (!n.ok()) return n.status();
    stats.history_rows += *n;
  }
  return Status::Ok();
}

// Out-of-order dedup entries older than the cutoff: the gap below them is
// given up and the high-water mark moves past them.
Status PurgeDedup(WriteTxn& txn, int64_t cutoff, PurgeStats& stats) {
  std::vector<std::pair<std::string, uint64_t>> nodes;
  {
    Result<Stmt*> st = txn.db().Prepare(
        "SELECT n.node_id, max(a.seq) FROM seq_above a JOIN nodes n ON n.node_ref = a.node_ref "
        "WHERE a.at < ?1 GROUP BY a.node_ref");
    if (!st.ok()) return st.status();
    StmtRef s(*st);
    s->Bind(1, cutoff);
    for (;;) {
      Result<bool> row = s->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      nodes.emplace_back(s->Text(0), static_cast<uint64_t>(s->Int(1)));
    }
  }
  for (auto& [node_id, max_seq] : nodes) {
    if (!txn.FindNode(node_id)) continue;
    NodeEntry& e = txn.MutableNode(node_id);
    e.hwm = std::max(e.hwm, max_seq);
    while (!e.above.empty() && *e.above.begin() <= e.hwm + 1) {
      e.hwm = std::max(e.hwm, *e.above.begin());
      e.above.erase(e.above.begin());
    }
    e.seq_dirty = true;
    Result<int64_t> n = RunCounting(txn, "DELETE FROM seq_above WHERE node_ref = ?1 AND seq <= ?2",
                                    e.ref, static_cast<int64_t>(e.hwm));
    if (!n.ok()) return n.status();
    stats.dedup_rows += *n;
  }
  return Status::Ok();
}

}  // namespace

Result<PurgeStats> PurgeOld(WriteTxn& txn, const RetentionPolicy& policy) {
  PurgeStats stats;
  int64_t history_cutoff = txn.now_us() - policy.history_horizon.count();
  APOLLO_RETURN_IF_ERROR(PurgeHistory(txn, history_cutoff, stats));
  APOLLO_RETURN_IF_ERROR(PurgeDedup(txn, txn.now_us() - policy.dedup_horizon.count(), stats));
  Result<int64_t> n = RunCounting(
      txn,
      "DELETE FROM alerts WHERE at < ?1 AND ?2 = ?2 AND task_id NOT IN "
      "(SELECT task_id FROM tasks WHERE settled_at IS NULL)",
      history_cutoff, 0);
  if (!n.ok()) return n.status();
  stats.alert_rows = *n;
  return stats;
}

Result<int64_t> InsertDeadLetter(WriteTxn& txn, const DeadLetter& letter) {
  Result<Stmt*> st = txn.db().Prepare(
      "INSERT INTO dead_letters(event_json, reason, deliveries, parked_at) "
      "VALUES (?1, ?2, ?3, ?4)");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, SafeDump(EventToJson(letter.event))).Bind(2, letter.reason);
  s->Bind(3, static_cast<int64_t>(letter.deliveries)).Bind(4, txn.now_us());
  APOLLO_RETURN_IF_ERROR(s->Run());
  return txn.db().LastInsertRowid();
}

Result<int64_t> InsertAlert(WriteTxn& txn, const AlertRow& alert) {
  APOLLO_RETURN_IF_ERROR(AddAlert(txn, {alert.kind, alert.task_id, alert.node_id, alert.from,
                                        alert.to, alert.event_id, alert.detail}));
  return txn.db().LastInsertRowid();
}

Status DeleteDeadLetter(WriteTxn& txn, int64_t id) {
  Result<int64_t> n = RunCounting(txn, "DELETE FROM dead_letters WHERE letter_id = ?1 AND ?2 = ?2",
                                  id, 0);
  if (!n.ok()) return n.status();
  if (*n == 0) return Status::NotFound("no dead letter " + std::to_string(id));
  return Status::Ok();
}

}  // namespace apollo::store::sqlite
