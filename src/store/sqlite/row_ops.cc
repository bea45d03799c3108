#include "store/sqlite/row_ops.h"

#include <vector>

#include <nlohmann/json.hpp>

namespace apollo::store::sqlite {

Result<std::optional<RowState>> LoadRow(WriteTxn& txn, std::string_view task_id,
                                        int64_t node_ref) {
  Result<Stmt*> st = txn.db().Prepare(
      "SELECT t.task_ref, tn.state, tn.version, tn.attempt, tn.retries, t.timeout_us, "
      "t.max_retries, t.status, t.settled_at IS NOT NULL, t.node_count, tn.due_kind "
      "FROM tasks t "
      "JOIN task_nodes tn "
      "ON tn.task_ref = t.task_ref AND tn.node_ref = ?2 WHERE t.task_id = ?1");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, task_id).Bind(2, node_ref);
  Result<bool> row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<RowState>();
  RowState r;
  r.task_ref = s->Int(0);
  r.node_ref = node_ref;
  r.state = static_cast<TaskState>(s->Int(1));
  r.version = s->Int(2);
  r.attempt = static_cast<uint32_t>(s->Int(3));
  r.retries = static_cast<int>(s->Int(4));
  r.timeout_us = s->Int(5);
  r.max_retries = static_cast<int>(s->Int(6));
  r.task_status = static_cast<TaskState>(s->Int(7));
  r.task_settled = s->Int(8) != 0;
  r.node_count = s->Int(9);
  r.due_kind = static_cast<DueKind>(s->Int(10));
  return std::optional<RowState>(r);
}

Result<int64_t> StorePayload(WriteTxn& txn, int64_t task_ref, std::string_view body) {
  Result<Stmt*> st = txn.db().Prepare("INSERT INTO payloads(task_ref, body) VALUES (?1, ?2)");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, task_ref).Bind(2, body);
  APOLLO_RETURN_IF_ERROR(s->Run());
  return txn.db().LastInsertRowid();
}

Result<bool> UpdateRow(WriteTxn& txn, const RowState& cur, const RowChange& c) {
  std::optional<int64_t> result_ref;
  std::optional<std::string_view> result_inline;
  if (c.result) {
    if (c.result->size() > kInlinePayloadMax) {
      Result<int64_t> ref = StorePayload(txn, cur.task_ref, *c.result);
      if (!ref.ok()) return ref.status();
      result_ref = *ref;
      result_inline = std::string_view();
    } else {
      result_inline = *c.result;
    }
  }
  Result<Stmt*> st = txn.db().Prepare(
      "UPDATE task_nodes SET state = ?3, version = version + 1, attempt = ?4, retries = ?5, "
      "updated_at = ?6, due_kind = ?7, due_at = ?8, blocked_reason = ?9, "
      "last_error = COALESCE(?10, last_error), result = COALESCE(?11, result), "
      "result_ref = CASE WHEN ?11 IS NULL THEN result_ref ELSE ?12 END "
      "WHERE task_ref = ?1 AND node_ref = ?2 AND version = ?13");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, cur.task_ref).Bind(2, cur.node_ref).Bind(3, static_cast<int64_t>(c.to));
  s->Bind(4, static_cast<int64_t>(c.attempt)).Bind(5, static_cast<int64_t>(c.retries));
  s->Bind(6, txn.now_us()).Bind(7, static_cast<int64_t>(c.due_kind)).Bind(8, c.due_at);
  s->Bind(9, c.blocked_reason);
  if (c.last_error) s->Bind(10, *c.last_error);
  if (result_inline) s->Bind(11, *result_inline);
  s->Bind(12, result_ref).Bind(13, cur.version);
  APOLLO_RETURN_IF_ERROR(s->Run());
  return txn.db().Changes() == 1;
}

Status AppendHistory(WriteTxn& txn, const HistoryEntry& e) {
  std::optional<int64_t> payload_ref;
  std::string_view inline_payload = e.payload;
  if (e.payload.size() > kInlinePayloadMax) {
    Result<int64_t> ref = StorePayload(txn, e.task_ref, e.payload);
    if (!ref.ok()) return ref.status();
    payload_ref = *ref;
    inline_payload = {};
  }
  Result<Stmt*> st = txn.db().Prepare(
      "INSERT INTO history(task_ref, hist_id, node_ref, cause, outcome, seq, event_type, "
      "attempt, from_state, to_state, version, at, detail, payload, payload_ref) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, e.task_ref).Bind(2, txn.NextHistId()).Bind(3, e.node_ref);
  s->Bind(4, static_cast<int64_t>(e.cause)).Bind(5, static_cast<int64_t>(e.outcome));
  s->Bind(6, e.seq);
  if (e.type) s->Bind(7, static_cast<int64_t>(*e.type));
  s->Bind(8, static_cast<int64_t>(e.attempt)).Bind(9, static_cast<int64_t>(e.from));
  s->Bind(10, static_cast<int64_t>(e.to)).Bind(11, e.version).Bind(12, txn.now_us());
  s->Bind(13, e.detail).Bind(14, inline_payload).Bind(15, payload_ref);
  return s->Run();
}

Status AddAlert(WriteTxn& txn, const AlertEntry& a) {
  Result<Stmt*> st = txn.db().Prepare(
      "INSERT INTO alerts(kind, task_id, node_id, from_state, to_state, event_id, detail, at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, a.kind).Bind(2, a.task_id).Bind(3, a.node_id);
  if (a.from) s->Bind(4, static_cast<int64_t>(*a.from));
  if (a.to) s->Bind(5, static_cast<int64_t>(*a.to));
  s->Bind(6, a.event_id).Bind(7, a.detail).Bind(8, txn.now_us());
  return s->Run();
}

std::string SafeDump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace apollo::store::sqlite
