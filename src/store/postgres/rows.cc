#include "store/postgres/rows.h"

#include <nlohmann/json.hpp>

namespace apollo::store::postgres {

Locked LockAndLoad(WriteTxn& txn, const std::set<RowKey>& keys,
                   const std::set<int64_t>& seq_refs) {
  Locked out;
  if (keys.empty() && seq_refs.empty()) return out;
  PgArray task_ids, node_refs, seqs;
  for (const auto& [task_id, node_ref] : keys) {
    task_ids.Add(task_id);
    node_refs.Add(node_ref);
  }
  for (int64_t r : seq_refs) {
    seqs.Add(r);
    out.seqs[r];  // a node without a node_seq row starts at 0
  }
  // Kind 0 rows are marks, kind 1 rows are (task, node) rows. Locks are taken
  // in key order (marks first), so two writers never wait in a cycle; a lock
  // wait re-reads the locked row, so every value here is the latest.
  pqxx::result r = txn.Exec(
      "WITH s AS (SELECT node_ref, hwm, n_above FROM node_seq "
      "WHERE node_ref = ANY($3::bigint[]) ORDER BY node_ref FOR UPDATE), "
      "r AS (SELECT k.task_id, tn.task_ref, tn.node_ref, tn.state, tn.version, tn.attempt, "
      "tn.retries, t.timeout_us, t.max_retries, tn.updated_at, tn.due_kind, tn.due_at, "
      "tn.blocked_reason, tn.last_error, tn.result, tn.result_ref, ts.status, "
      "ts.settled_at IS NOT NULL AS settled "
      "FROM unnest($1::text[], $2::bigint[]) AS k(task_id, node_ref) "
      "JOIN tasks t ON t.task_id = k.task_id "
      "JOIN task_nodes tn ON tn.task_ref = t.task_ref AND tn.node_ref = k.node_ref "
      "JOIN task_status ts ON ts.task_ref = t.task_ref "
      "ORDER BY tn.task_ref, tn.node_ref FOR UPDATE OF tn, ts) "
      "SELECT 0, NULL::text, 0::bigint, node_ref, 0, hwm, n_above::bigint, 0, 0::bigint, 0, "
      "0::bigint, 0, NULL::bigint, '', '', '', NULL::bigint, 0, false FROM s "
      "UNION ALL SELECT 1, * FROM r",
      task_ids.str(), node_refs.str(), seqs.str());
  for (const auto& f : r) {
    if (f[0].as<int>() == 0) {
      SeqState& s = out.seqs[f[3].as<int64_t>()];
      s.hwm = s.loaded_hwm = static_cast<uint64_t>(f[5].as<int64_t>());
      s.loaded_above = static_cast<size_t>(f[6].as<int64_t>());
      continue;
    }
    PgRow row;
    row.task_ref = f[2].as<int64_t>();
    row.node_ref = f[3].as<int64_t>();
    row.state = static_cast<TaskState>(f[4].as<int>());
    row.version = f[5].as<int64_t>();
    row.attempt = static_cast<uint32_t>(f[6].as<int64_t>());
    row.retries = f[7].as<int>();
    row.timeout_us = f[8].as<int64_t>();
    row.max_retries = f[9].as<int>();
    row.updated_at = f[10].as<int64_t>();
    row.due_kind = static_cast<DueKind>(f[11].as<int>());
    row.due_at = Opt<int64_t>(f[12]);
    row.blocked_reason = f[13].as<std::string>();
    row.last_error = f[14].as<std::string>();
    row.result = f[15].as<std::string>();
    row.result_ref = Opt<int64_t>(f[16]);
    row.loaded_version = row.version;
    out.tasks[row.task_ref] = {static_cast<TaskState>(f[17].as<int>()), f[18].as<bool>(),
                               row.max_retries};
    out.rows.emplace(RowKey(f[1].as<std::string>(), row.node_ref), std::move(row));
  }
  ReadAbove(txn, out.seqs);
  return out;
}

int64_t StorePayload(WriteTxn& txn, int64_t task_ref, std::string_view body) {
  pqxx::result r = txn.Exec(
      "INSERT INTO payloads(task_ref, body) VALUES ($1, $2) RETURNING payload_id", task_ref,
      CleanText(body));
  return r[0][0].as<int64_t>();
}

void ChangeRow(WriteTxn& txn, PgRow& row, const RowChange& c) {
  row.state = c.to;
  row.version += 1;
  row.attempt = c.attempt;
  row.retries = c.retries;
  row.updated_at = txn.now_us();
  row.due_kind = c.due_kind;
  row.due_at = c.due_at;
  row.blocked_reason = c.blocked_reason;
  if (c.last_error) row.last_error = *c.last_error;
  if (c.result) {
    if (c.result->size() > kInlinePayloadMax) {
      row.result_ref = StorePayload(txn, row.task_ref, *c.result);
      row.result.clear();
    } else {
      row.result = *c.result;
      row.result_ref.reset();
    }
  }
  row.dirty = true;
}

void WriteSet::AddHistory(WriteTxn& txn, const HistoryEntry& e) {
  Hist h{e, std::string(e.detail), {}, std::nullopt};
  if (e.payload.size() > kInlinePayloadMax) {
    h.payload_ref = StorePayload(txn, e.task_ref, e.payload);
  } else {
    h.payload = std::string(e.payload);
  }
  h.e.detail = {};
  h.e.payload = {};
  history_.push_back(std::move(h));
}

void WriteSet::AddAlert(const AlertEntry& a) {
  a_kind_.Add(a.kind);
  a_task_.Add(a.task_id);
  a_node_.Add(a.node_id);
  a.from ? a_from_.Add(static_cast<int64_t>(*a.from)) : a_from_.AddNull();
  a.to ? a_to_.Add(static_cast<int64_t>(*a.to)) : a_to_.AddNull();
  a_event_.Add(a.event_id);
  a_detail_.Add(a.detail);
}

Result<TouchedFacts> WriteSet::Flush(WriteTxn& txn, RowMap& rows, SeqMap* seqs) {
  PgArray tr, nr, old_v, st, v, att, ret, upd, dk, da, br, le, res, rr;
  size_t dirty = 0;
  for (auto& [key, row] : rows) {
    if (!row.dirty) continue;
    ++dirty;
    tr.Add(row.task_ref), nr.Add(row.node_ref), old_v.Add(row.loaded_version);
    st.Add(static_cast<int64_t>(row.state)), v.Add(row.version);
    att.Add(static_cast<int64_t>(row.attempt)), ret.Add(static_cast<int64_t>(row.retries));
    upd.Add(row.updated_at), dk.Add(static_cast<int64_t>(row.due_kind)), da.Add(row.due_at);
    br.Add(row.blocked_reason), le.Add(row.last_error), res.Add(row.result);
    rr.Add(row.result_ref);
  }
  PgArray h_tr, h_nr, h_cause, h_out, h_seq, h_type, h_att, h_from, h_to, h_v, h_det, h_pay, h_ref;
  for (const Hist& h : history_) {
    const HistoryEntry& e = h.e;
    h_tr.Add(e.task_ref), h_nr.Add(e.node_ref), h_cause.Add(static_cast<int64_t>(e.cause));
    h_out.Add(static_cast<int64_t>(e.outcome)), h_seq.Add(e.seq);
    e.type ? h_type.Add(static_cast<int64_t>(*e.type)) : h_type.AddNull();
    h_att.Add(static_cast<int64_t>(e.attempt)), h_from.Add(static_cast<int64_t>(e.from));
    h_to.Add(static_cast<int64_t>(e.to)), h_v.Add(e.version), h_det.Add(h.detail);
    h_pay.Add(h.payload), h_ref.Add(h.payload_ref);
  }
  PgArray m_ref, m_hwm, m_above, touched;
  if (seqs) SeqArrays(*seqs, m_ref, m_hwm, m_above);
  for (int64_t t : touched_) touched.Add(t);
  pqxx::result r = txn.Exec(
      "WITH upd AS (UPDATE task_nodes tn SET state = u.state, version = u.version, "
      "attempt = u.attempt, retries = u.retries, updated_at = u.updated_at, "
      "due_kind = u.due_kind, due_at = u.due_at, blocked_reason = u.blocked_reason, "
      "last_error = u.last_error, result = u.result, result_ref = u.result_ref "
      "FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::int[], $5::bigint[], "
      "$6::bigint[], $7::int[], $8::bigint[], $9::int[], $10::bigint[], $11::text[], "
      "$12::text[], $13::text[], $14::bigint[]) AS u(task_ref, node_ref, old_version, state, "
      "version, attempt, retries, updated_at, due_kind, due_at, blocked_reason, last_error, "
      "result, result_ref) WHERE tn.task_ref = u.task_ref AND tn.node_ref = u.node_ref "
      "AND tn.version = u.old_version RETURNING 1), "
      "hist AS (INSERT INTO history(task_ref, node_ref, cause, outcome, seq, event_type, "
      "attempt, from_state, to_state, version, at, detail, payload, payload_ref) "
      "SELECT u.task_ref, u.node_ref, u.cause, u.outcome, u.seq, u.event_type, u.attempt, "
      "u.from_state, u.to_state, u.version, $28, u.detail, u.payload, u.payload_ref "
      "FROM unnest($15::bigint[], $16::bigint[], $17::int[], $18::int[], $19::bigint[], "
      "$20::int[], $21::bigint[], $22::int[], $23::int[], $24::bigint[], $25::text[], "
      "$26::text[], $27::bigint[]) WITH ORDINALITY AS u(task_ref, node_ref, cause, outcome, "
      "seq, event_type, attempt, from_state, to_state, version, detail, payload, "
      "payload_ref, ord) ORDER BY u.ord), "
      "alert AS (INSERT INTO alerts(kind, task_id, node_id, from_state, to_state, event_id, "
      "detail, at) SELECT u.kind, u.task_id, u.node_id, u.from_state, u.to_state, u.event_id, "
      "u.detail, $28 FROM unnest($29::text[], $30::text[], $31::text[], $32::int[], "
      "$33::int[], $34::text[], $35::text[]) WITH ORDINALITY AS u(kind, task_id, node_id, "
      "from_state, to_state, event_id, detail, ord) ORDER BY u.ord), "
      "mark AS (INSERT INTO node_seq(node_ref, hwm, n_above) "
      "SELECT * FROM unnest($36::bigint[], $37::bigint[], $38::int[]) "
      "ON CONFLICT (node_ref) DO UPDATE SET hwm = excluded.hwm, n_above = excluded.n_above) "
      "SELECT 0, (SELECT count(*) FROM upd), 0::bigint, 0, 0 "
      "UNION ALL SELECT 1, task_ref, node_ref, state, retries FROM task_nodes "
      "WHERE task_ref = ANY($39::bigint[]) "
      "UNION ALL SELECT 2, dep_ref, task_ref, 0, 0 FROM task_deps "
      "WHERE dep_ref = ANY($39::bigint[])",
      tr.str(), nr.str(), old_v.str(), st.str(), v.str(), att.str(), ret.str(), upd.str(),
      dk.str(), da.str(), br.str(), le.str(), res.str(), rr.str(), h_tr.str(), h_nr.str(),
      h_cause.str(), h_out.str(), h_seq.str(), h_type.str(), h_att.str(), h_from.str(),
      h_to.str(), h_v.str(), h_det.str(), h_pay.str(), h_ref.str(), txn.now_us(),
      a_kind_.str(), a_task_.str(), a_node_.str(), a_from_.str(), a_to_.str(), a_event_.str(),
      a_detail_.str(), m_ref.str(), m_hwm.str(), m_above.str(), touched.str());
  history_.clear();
  a_kind_ = a_task_ = a_node_ = a_from_ = a_to_ = a_event_ = a_detail_ = PgArray();
  TouchedFacts facts;
  for (const auto& f : r) {
    int kind = f[0].as<int>();
    if (kind == 0 && static_cast<size_t>(f[1].as<int64_t>()) != dirty) {
      return Status::Internal("compare-and-set lost on a locked task_nodes row");
    }
    if (kind == 1) {
      facts.states[f[1].as<int64_t>()][f[2].as<int64_t>()] = {
          static_cast<TaskState>(f[3].as<int>()), f[4].as<int>()};
    }
    if (kind == 2) facts.dependents.emplace_back(f[1].as<int64_t>(), f[2].as<int64_t>());
  }
  // The statement read the rows as they were before its own UPDATE.
  for (auto& [key, row] : rows) {
    if (row.dirty && touched_.count(row.task_ref)) {
      facts.states[row.task_ref][row.node_ref] = {row.state, row.retries};
    }
    row.dirty = false;
    row.loaded_version = row.version;
  }
  if (seqs) FlushSeqs(txn, *seqs, /*with_marks=*/false);
  return facts;
}

}  // namespace apollo::store::postgres
