#include "store/postgres/seq.h"

#include <algorithm>

namespace apollo::store::postgres {

SeqMap LockSeqs(WriteTxn& txn, const std::set<int64_t>& node_refs) {
  SeqMap seqs;
  if (node_refs.empty()) return seqs;
  PgArray refs;
  for (int64_t r : node_refs) {
    refs.Add(r);
    seqs[r];  // a node without a node_seq row starts at 0
  }
  pqxx::result r = txn.Exec(
      "SELECT node_ref, hwm, n_above FROM node_seq WHERE node_ref = ANY($1::bigint[]) "
      "ORDER BY node_ref FOR UPDATE",
      refs.str());
  for (const auto& row : r) {
    SeqState& s = seqs[row[0].as<int64_t>()];
    s.hwm = s.loaded_hwm = static_cast<uint64_t>(row[1].as<int64_t>());
    s.loaded_above = static_cast<size_t>(row[2].as<int64_t>());
  }
  ReadAbove(txn, seqs);
  return seqs;
}

void ReadAbove(WriteTxn& txn, SeqMap& seqs) {
  PgArray refs;
  for (const auto& [ref, s] : seqs) {
    if (s.loaded_above > 0) refs.Add(ref);
  }
  if (refs.empty()) return;
  pqxx::result a = txn.Exec(
      "SELECT node_ref, seq FROM seq_above WHERE node_ref = ANY($1::bigint[])", refs.str());
  for (const auto& row : a) {
    seqs[row[0].as<int64_t>()].above.insert(static_cast<uint64_t>(row[1].as<int64_t>()));
  }
  for (auto& [ref, s] : seqs) s.loaded_above = s.above.size();  // the rows, not the count
}

void MarkSeen(SeqState& s, uint64_t seq) {
  if (seq != s.hwm + 1) {
    s.above.insert(seq);
    s.inserted.push_back(seq);
    return;
  }
  s.hwm = seq;
  while (!s.above.empty() && *s.above.begin() == s.hwm + 1) {
    s.hwm = *s.above.begin();
    s.above.erase(s.above.begin());
  }
  if (s.hwm > seq) s.delete_upto = std::max(s.delete_upto, s.hwm);
}

void SkipTo(SeqState& s, uint64_t seq) {
  s.hwm = std::max(s.hwm, seq);
  while (!s.above.empty() && *s.above.begin() <= s.hwm + 1) {
    s.hwm = std::max(s.hwm, *s.above.begin());
    s.above.erase(s.above.begin());
  }
  s.delete_upto = std::max(s.delete_upto, s.hwm);
}

void SeqArrays(const SeqMap& seqs, PgArray& refs, PgArray& hwms, PgArray& n_above) {
  for (const auto& [ref, s] : seqs) {
    if (!s.changed()) continue;
    refs.Add(ref);
    hwms.Add(static_cast<int64_t>(s.hwm));
    n_above.Add(static_cast<int64_t>(s.above.size()));
  }
}

int64_t FlushSeqs(WriteTxn& txn, SeqMap& seqs, bool with_marks) {
  PgArray m_ref, m_hwm, m_above, i_ref, i_seq, d_ref, d_upto;
  if (with_marks) SeqArrays(seqs, m_ref, m_hwm, m_above);
  for (auto& [ref, s] : seqs) {
    for (uint64_t q : s.inserted) i_ref.Add(ref), i_seq.Add(static_cast<int64_t>(q));
    if (s.delete_upto > 0) d_ref.Add(ref), d_upto.Add(static_cast<int64_t>(s.delete_upto));
  }
  if (!m_ref.empty()) {
    txn.Exec(
        "INSERT INTO node_seq(node_ref, hwm, n_above) "
        "SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[]) "
        "ON CONFLICT (node_ref) DO UPDATE SET hwm = excluded.hwm, n_above = excluded.n_above",
        m_ref.str(), m_hwm.str(), m_above.str());
  }
  if (!i_ref.empty()) {
    txn.Exec(
        "INSERT INTO seq_above(node_ref, seq, at) "
        "SELECT r, s, $3 FROM unnest($1::bigint[], $2::bigint[]) AS u(r, s)",
        i_ref.str(), i_seq.str(), txn.now_us());
  }
  int64_t deleted = 0;
  if (!d_ref.empty()) {
    pqxx::result r = txn.Exec(
        "DELETE FROM seq_above a USING unnest($1::bigint[], $2::bigint[]) AS u(r, upto) "
        "WHERE a.node_ref = u.r AND a.seq <= u.upto",
        d_ref.str(), d_upto.str());
    deleted = static_cast<int64_t>(r.affected_rows());
  }
  for (auto& [ref, s] : seqs) {
    s.loaded_hwm = s.hwm;
    s.loaded_above = s.above.size();
    s.inserted.clear();
    s.delete_upto = 0;
  }
  return deleted;
}

}  // namespace apollo::store::postgres
