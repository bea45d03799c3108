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
      "SELECT node_ref, hwm FROM node_seq WHERE node_ref = ANY($1::bigint[]) "
      "ORDER BY node_ref FOR UPDATE",
      refs.str());
  for (const auto& row : r) {
    SeqState& s = seqs[row[0].as<int64_t>()];
    s.hwm = s.loaded_hwm = static_cast<uint64_t>(row[1].as<int64_t>());
  }
  // A separate statement: its snapshot is taken after the locks were granted,
  // so it sees every seq_above row the previous lock holder committed.
  pqxx::result a = txn.Exec(
      "SELECT node_ref, seq FROM seq_above WHERE node_ref = ANY($1::bigint[])", refs.str());
  for (const auto& row : a) {
    seqs[row[0].as<int64_t>()].above.insert(static_cast<uint64_t>(row[1].as<int64_t>()));
  }
  return seqs;
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

int64_t FlushSeqs(WriteTxn& txn, SeqMap& seqs) {
  PgArray m_ref, m_hwm, i_ref, i_seq, d_ref, d_upto;
  for (auto& [ref, s] : seqs) {
    if (s.hwm != s.loaded_hwm) m_ref.Add(ref), m_hwm.Add(static_cast<int64_t>(s.hwm));
    for (uint64_t q : s.inserted) i_ref.Add(ref), i_seq.Add(static_cast<int64_t>(q));
    if (s.delete_upto > 0) d_ref.Add(ref), d_upto.Add(static_cast<int64_t>(s.delete_upto));
  }
  if (!m_ref.empty()) {
    txn.Exec(
        "INSERT INTO node_seq(node_ref, hwm) SELECT * FROM unnest($1::bigint[], $2::bigint[]) "
        "ON CONFLICT (node_ref) DO UPDATE SET hwm = excluded.hwm",
        m_ref.str(), m_hwm.str());
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
    s.inserted.clear();
    s.delete_upto = 0;
  }
  return deleted;
}

}  // namespace apollo::store::postgres
