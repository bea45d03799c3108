#pragma once

// Per-node deduplication state: the contiguous high-water mark (node_seq)
// and the seqs stored above a gap (seq_above, counted in node_seq.n_above so
// the common case never reads it). Read under a row lock on node_seq, so
// writers deduplicating the same node take turns; changed in memory; written
// back with the op. Writer thread only.

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "store/engine/sql.h"
#include "store/engine/write_txn.h"

namespace apollo::store::engine {

struct SeqState {
  uint64_t hwm = 0;  // every seq <= hwm is stored
  uint64_t loaded_hwm = 0;
  size_t loaded_above = 0;
  std::set<uint64_t> above;        // stored seqs > hwm + 1
  std::vector<uint64_t> inserted;  // new seq_above rows
  uint64_t delete_upto = 0;        // seq_above rows <= this are absorbed
  bool changed() const { return hwm != loaded_hwm || above.size() != loaded_above; }
};

using SeqMap = std::map<int64_t, SeqState>;  // by node_ref

// The statement that locks (in node_ref order) and reads the marks of the
// node_refs in a RowSet of its own; queue it with ReadSeqs to share a round
// trip with other reads, then call LoadSeqs on its rows.
extern const sql::Statement kLockSeqs;
sql::RowSet SeqKeys(const std::set<int64_t>& node_refs);
// Fills `seqs` (every ref in `node_refs` gets an entry; a node without a
// node_seq row starts at 0) from kLockSeqs' rows, then reads seq_above for
// the nodes that have such rows (a statement after the lock: it sees what
// the previous lock holder committed).
Status LoadSeqs(WriteTxn& txn, const std::set<int64_t>& node_refs, const sql::Rows& locked,
                SeqMap& seqs);
// kLockSeqs + LoadSeqs.
Result<SeqMap> LockSeqs(WriteTxn& txn, const std::set<int64_t>& node_refs);

inline bool SeenBefore(const SeqState& s, uint64_t seq) {
  return seq <= s.hwm || s.above.count(seq) > 0;
}

// Records `seq` as stored and advances the contiguous high-water mark.
void MarkSeen(SeqState& s, uint64_t seq);

// Moves the mark past `seq` (a gap given up) and absorbs what follows.
void SkipTo(SeqState& s, uint64_t seq);

// Queues the writes of what changed: marks, seq_above inserts and deletes.
// `deleted` (if given) receives the seq_above rows deleted, by the next
// Flush.
void FlushSeqs(WriteTxn& txn, SeqMap& seqs, int64_t* deleted = nullptr);

}  // namespace apollo::store::engine
