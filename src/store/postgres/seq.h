#pragma once

// Per-node deduplication state: the contiguous high-water mark (node_seq)
// and the seqs stored above a gap (seq_above, counted in node_seq.n_above so
// the common case never reads it). Loaded under a row lock on node_seq, so
// replicas deduplicating the same node take turns; changed in memory; written
// back with the batch. Writer thread only; may throw pqxx exceptions.

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "store/postgres/writer.h"

namespace apollo::store::postgres {

struct SeqState {
  uint64_t hwm = 0;          // every seq <= hwm is stored
  uint64_t loaded_hwm = 0;
  size_t loaded_above = 0;
  std::set<uint64_t> above;  // stored seqs > hwm + 1
  std::vector<uint64_t> inserted;  // new seq_above rows
  uint64_t delete_upto = 0;        // seq_above rows <= this are absorbed
  bool changed() const { return hwm != loaded_hwm || above.size() != loaded_above; }
};

using SeqMap = std::map<int64_t, SeqState>;  // by node_ref

// Locks (in node_ref order) and loads the state of `node_refs`.
SeqMap LockSeqs(WriteTxn& txn, const std::set<int64_t>& node_refs);

// Reads seq_above for the nodes whose n_above says they have rows. Must run
// in a statement after the one that locked their node_seq rows (it then sees
// what the previous lock holder committed).
void ReadAbove(WriteTxn& txn, SeqMap& seqs);

inline bool SeenBefore(const SeqState& s, uint64_t seq) {
  return seq <= s.hwm || s.above.count(seq) > 0;
}

// Records `seq` as stored and advances the contiguous high-water mark.
void MarkSeen(SeqState& s, uint64_t seq);

// Moves the mark past `seq` (a gap given up) and absorbs what follows.
void SkipTo(SeqState& s, uint64_t seq);

// The changed marks as arrays for node_seq (node_ref, hwm, n_above).
void SeqArrays(const SeqMap& seqs, PgArray& refs, PgArray& hwms, PgArray& n_above);

// Writes seq_above inserts and deletes; returns seq_above rows deleted.
// With `with_marks`, also writes node_seq (else the caller did).
int64_t FlushSeqs(WriteTxn& txn, SeqMap& seqs, bool with_marks);

}  // namespace apollo::store::postgres
