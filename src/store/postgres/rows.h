#pragma once

// Row-level building blocks of the PostgreSQL write paths, set-based so a
// batch of N events costs the same handful of round trips as one event:
//  1. LockAndLoad locks (FOR UPDATE, in key order) and reads every dedup
//     mark, (task, node) row and task roll-up the batch touches;
//  2. changes are made to those rows in memory, in order, exactly as the
//     SQLite backend makes them one by one;
//  3. WriteSet::Flush writes rows (compare-and-set on the version each was
//     loaded with), history, alerts and marks, and reads the touched tasks'
//     node states, in one statement;
//  4. RecomputeTasks writes the changed roll-ups.
// With BEGIN and COMMIT that is 5 round trips per batch.
// All run on the writer thread inside its transaction and may throw pqxx
// exceptions (see writer.h).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/event.h"
#include "core/task_state.h"
#include "store/postgres/seq.h"
#include "store/postgres/writer.h"
#include "store/row_change.h"
#include "store/types.h"

namespace apollo::store::postgres {

// One task_nodes row as loaded (and then changed in memory).
struct PgRow {
  int64_t task_ref = 0;
  int64_t node_ref = 0;
  TaskState state = TaskState::kPending;
  int64_t version = 0;
  uint32_t attempt = 0;
  int retries = 0;
  int64_t timeout_us = 0;  // from the task
  int max_retries = 0;     // from the task
  int64_t updated_at = 0;
  DueKind due_kind = DueKind::kNone;
  std::optional<int64_t> due_at;
  std::string blocked_reason;
  std::string last_error;
  std::string result;
  std::optional<int64_t> result_ref;
  int64_t loaded_version = 0;  // the CAS expectation when flushed
  bool dirty = false;
};

using RowKey = std::pair<std::string, int64_t>;  // (task_id, node_ref)
using RowMap = std::map<RowKey, PgRow>;

// A task's roll-up as locked (task_status FOR UPDATE).
struct TaskFacts {
  TaskState status = TaskState::kPending;
  bool settled = false;
  int max_retries = 0;
};
using TaskMap = std::map<int64_t, TaskFacts>;  // by task_ref

struct Locked {
  RowMap rows;
  TaskMap tasks;
  SeqMap seqs;  // for `seq_refs`
};

// One statement: locks, in this order and each in key order, the node_seq
// rows of `seq_refs` (dedup marks), then the task_nodes rows among `keys`
// with their tasks' task_status rows, and reads them all. Then, only if some
// node has out-of-order seqs, reads seq_above (a second statement).
Locked LockAndLoad(WriteTxn& txn, const std::set<RowKey>& keys,
                   const std::set<int64_t>& seq_refs);

// A new value for a row (state change). Mirrors the SQLite backend.


// Stores `body` in the payload side table; returns its id.
int64_t StorePayload(WriteTxn& txn, int64_t task_ref, std::string_view body);

// Applies `change` to the in-memory row: version + 1, updated_at = now.
void ChangeRow(WriteTxn& txn, PgRow& row, const RowChange& change);

struct HistoryEntry {
  int64_t task_ref = 0;
  int64_t node_ref = 0;
  Cause cause = Cause::kEvent;
  Outcome outcome = Outcome::kApplied;
  std::optional<int64_t> seq;
  std::optional<EventType> type;
  uint32_t attempt = 0;
  TaskState from = TaskState::kPending;
  TaskState to = TaskState::kPending;
  int64_t version = 0;
  std::string_view detail;
  std::string_view payload;
};

struct AlertEntry {
  std::string_view kind;
  std::string_view task_id;
  std::string_view node_id;
  std::optional<TaskState> from;
  std::optional<TaskState> to;
  std::string_view event_id;
  std::string_view detail;
};

// What the other nodes of the touched tasks look like, read by Flush.
struct TouchedFacts {
  // task_ref -> (node_ref -> (state, retries)), our own changes included.
  std::map<int64_t, std::map<int64_t, std::pair<TaskState, int>>> states;
  std::vector<std::pair<int64_t, int64_t>> dependents;  // (dep_ref, task_ref)
};

// History and alert rows collected during an op, written by Flush.
class WriteSet {
 public:
  void AddHistory(WriteTxn& txn, const HistoryEntry& e);
  void AddAlert(const AlertEntry& a);
  void Touch(int64_t task_ref) { touched_.insert(task_ref); }
  const std::set<int64_t>& touched() const { return touched_; }

  // One statement: writes the dirty rows (compare-and-set on the version
  // they were loaded with; kInternal if one fails: the lock was lost), the
  // history, the alerts and the changed marks of `seqs` (if given), and reads
  // the node states and dependents of the touched tasks. seq_above changes
  // follow in their own statements, only when there are any.
  Result<TouchedFacts> Flush(WriteTxn& txn, RowMap& rows, SeqMap* seqs);

 private:
  struct Hist {
    HistoryEntry e;
    std::string detail, payload;
    std::optional<int64_t> payload_ref;
  };
  std::vector<Hist> history_;
  PgArray a_kind_, a_task_, a_node_, a_from_, a_to_, a_event_, a_detail_;
  std::set<int64_t> touched_;
};

// Recomputes the roll-up of each touched task from `facts` (tasks as locked
// by LockAndLoad); when a task becomes settled, makes its PENDING dependents
// due (all deps succeeded) or marks them upstream_failed.
Status RecomputeTasks(WriteTxn& txn, const std::set<int64_t>& touched, const TaskMap& tasks,
                      const TouchedFacts& facts);


}  // namespace apollo::store::postgres
