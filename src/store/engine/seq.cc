#include "store/engine/seq.h"

#include <algorithm>

namespace apollo::store::engine {
namespace {

constexpr sql::Column kRefCols[] = {{"node_ref", sql::Type::kInt}};

constexpr sql::Statement kReadAbove{
    "SELECT a.node_ref, a.seq FROM seq_above a, @rows WHERE a.node_ref = u.node_ref", kRefCols};

constexpr sql::Column kMarkCols[] = {
    {"node_ref", sql::Type::kInt}, {"hwm", sql::Type::kInt}, {"n_above", sql::Type::kInt}};
constexpr sql::Statement kWriteMarks{
    "INSERT INTO node_seq(node_ref, hwm, n_above) SELECT u.node_ref, u.hwm, u.n_above "
    "FROM @rows WHERE true "
    "ON CONFLICT (node_ref) DO UPDATE SET hwm = excluded.hwm, n_above = excluded.n_above",
    kMarkCols};

constexpr sql::Column kAboveCols[] = {{"node_ref", sql::Type::kInt}, {"seq", sql::Type::kInt}};
constexpr sql::Statement kInsertAbove{
    "INSERT INTO seq_above(node_ref, seq, at) SELECT u.node_ref, u.seq, $1 FROM @rows", kAboveCols};

constexpr sql::Column kUptoCols[] = {{"node_ref", sql::Type::kInt}, {"upto", sql::Type::kInt}};
constexpr sql::Statement kDeleteAbove{
    "DELETE FROM seq_above AS a USING @rows WHERE a.node_ref = u.node_ref AND a.seq <= u.upto",
    kUptoCols};

}  // namespace

const sql::Statement kLockSeqs{
    "SELECT s.node_ref, s.hwm, s.n_above FROM node_seq s, @rows WHERE s.node_ref = u.node_ref "
    "/*@pg ORDER BY s.node_ref FOR UPDATE OF s*/",
    kRefCols};

sql::RowSet SeqKeys(const std::set<int64_t>& node_refs) {
  sql::RowSet keys(kLockSeqs);
  for (int64_t r : node_refs) keys.Add(r);
  return keys;
}

Status LoadSeqs(WriteTxn& txn, const std::set<int64_t>& node_refs, const sql::Rows& locked,
                SeqMap& seqs) {
  for (int64_t r : node_refs) seqs[r];  // a node without a node_seq row starts at 0
  sql::RowSet with_above(kReadAbove);
  for (size_t i = 0; i < locked.size(); ++i) {
    SeqState& s = seqs[locked.Int(i, 0)];
    s.hwm = s.loaded_hwm = static_cast<uint64_t>(locked.Int(i, 1));
    s.loaded_above = static_cast<size_t>(locked.Int(i, 2));
    if (s.loaded_above > 0) with_above.Add(locked.Int(i, 0));
  }
  if (with_above.empty()) return Status::Ok();
  Result<sql::Rows> a = txn.Query(kReadAbove, {}, &with_above);
  if (!a.ok()) return a.status();
  for (size_t i = 0; i < a->size(); ++i) {
    seqs[a->Int(i, 0)].above.insert(static_cast<uint64_t>(a->Int(i, 1)));
  }
  for (auto& [ref, s] : seqs) {
    if (s.loaded_above > 0) s.loaded_above = s.above.size();  // the rows, not the count
  }
  return Status::Ok();
}

Result<SeqMap> LockSeqs(WriteTxn& txn, const std::set<int64_t>& node_refs) {
  SeqMap seqs;
  if (node_refs.empty()) return seqs;
  sql::RowSet keys = SeqKeys(node_refs);
  Result<sql::Rows> locked = txn.Query(kLockSeqs, {}, &keys);
  if (!locked.ok()) return locked.status();
  APOLLO_RETURN_IF_ERROR(LoadSeqs(txn, node_refs, *locked, seqs));
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

void FlushSeqs(WriteTxn& txn, SeqMap& seqs, int64_t* deleted) {
  sql::RowSet marks(kWriteMarks), inserts(kInsertAbove), deletes(kDeleteAbove);
  for (auto& [ref, s] : seqs) {
    if (s.changed()) {
      marks.Add(ref, s.hwm, s.above.size());
    }
    for (uint64_t q : s.inserted) inserts.Add(ref, q);
    if (s.delete_upto > 0) deletes.Add(ref, s.delete_upto);
    s.loaded_hwm = s.hwm;
    s.loaded_above = s.above.size();
    s.inserted.clear();
    s.delete_upto = 0;
  }
  txn.Exec(kWriteMarks, {}, &marks);
  sql::Params at(txn.now_us());
  txn.Exec(kInsertAbove, at, &inserts);
  txn.Exec(kDeleteAbove, {}, &deletes, nullptr, deleted);
}

}  // namespace apollo::store::engine
