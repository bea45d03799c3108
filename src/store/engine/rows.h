#pragma once

// Row-level building blocks of the write paths, set-based so a batch of N
// events costs the same few round trips as one event on PostgreSQL (and the
// same per-row calls as before on SQLite):
//  1. LoadRows locks (FOR UPDATE, in key order) and reads every (task, node)
//     row the op touches with its task's roll-up, in one statement that may
//     share its round trip with the dedup marks (seq.h);
//  2. the op changes those rows in memory, in order (ChangeRow), and
//     collects history and alerts in a WriteSet;
//  3. WriteSet::Flush queues the row writes (compare-and-set on the version
//     each was loaded with), history, alerts, and the read of the touched
//     tasks' other rows;
//  4. RecomputeTasks (rollup.cc) writes the changed roll-ups and releases
//     dependents of tasks that settled.
// Writer thread only.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/event.h"
#include "core/task_state.h"
#include "store/engine/row_change.h"
#include "store/engine/sql.h"
#include "store/engine/write_txn.h"
#include "store/task_change.h"
#include "store/types.h"

namespace apollo::store::engine {

// One task_nodes row as loaded, then changed in memory. Text columns are
// not read: a change sets them (written) or leaves them unset (kept).
struct Row {
  int64_t task_ref = 0;
  int64_t node_ref = 0;
  TaskState state = TaskState::kPending;
  int64_t version = 0;
  uint32_t attempt = 0;
  int retries = 0;
  int64_t timeout_us = 0;        // from the task
  int max_retries = 0;           // from the task
  int64_t start_timeout_us = 0;  // from the task
  bool compensate = false;       // from the task
  int64_t updated_at = 0;
  std::optional<int64_t> start_deadline;
  int extensions = 0;
  bool permanent = false;
  DueKind due_kind = DueKind::kNone;
  std::optional<int64_t> due_at;
  std::optional<std::string> blocked_reason;  // set: written
  std::optional<std::string> last_error;      // set: written
  std::optional<std::string> result;          // set: written with result_ref
  std::optional<int64_t> result_ref;
  int64_t loaded_version = 0;  // the CAS expectation when flushed
  bool dirty = false;
};

// (task_id, node_ref). The task_id views the op's events or requests,
// which outlive the op: no copy per row.
using RowKey = std::pair<std::string_view, int64_t>;
struct RowKeyHash {
  size_t operator()(const RowKey& k) const {
    return std::hash<std::string_view>()(k.first) ^
           (std::hash<int64_t>()(k.second) * 0x9e3779b97f4a7c15ULL);
  }
};
using RowKeys = std::unordered_set<RowKey, RowKeyHash>;
using RowMap = std::unordered_map<RowKey, Row, RowKeyHash>;

// A task's roll-up as locked with its rows.
struct TaskFacts {
  TaskState status = TaskState::kPending;
  bool settled = false;
  int max_retries = 0;
  int node_count = 0;  // 0: not known (rows from before schema 2)
  int dependents = 0;  // tasks depending on this one
};
using TaskMap = std::unordered_map<int64_t, TaskFacts>;  // by task_ref

struct Loaded {
  RowMap rows;
  TaskMap tasks;
};

// Locks and reads the rows of (task_id, node_ref) keys. When the writer's
// hints (task_ref_hints.h) give every key's task ref, by the whole key
// (task_ref, node_ref), checking the task id, so no plan can fan out by
// node; else by task id, as all of them: one statement either way, so the
// locks are taken in one key order. Queue it to share a round trip with
// other statements (see apply.cc), then Finish after the flush.
class RowLoad {
 public:
  // `keys` must outlive the RowLoad and stay unchanged: the loaded rows are
  // keyed by its views.
  RowLoad(WriteTxn& txn, const RowKeys& keys);
  void Queue();
  // The rows found. A hinted key that found no row (a stale hint) is asked
  // again by id, in a round trip of its own. The refs read become hints.
  Result<Loaded> Finish();

 private:
  WriteTxn& txn_;
  std::vector<const RowKey*> keys_;  // in the order of set_
  bool by_ref_ = false;
  sql::RowSet set_;
  sql::Rows out_;
};

// RowLoad, queued and finished in a round trip of its own.
Result<Loaded> LoadRows(WriteTxn& txn, const RowKeys& keys);

// Stores `body` in the payload side table; returns its id.
Result<int64_t> StorePayload(WriteTxn& txn, int64_t task_ref, std::string_view body);

// Applies `change` to the in-memory row: version + 1, updated_at = now.
Status ChangeRow(WriteTxn& txn, Row& row, const RowChange& change);

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

// The (state, retries) of every node row of each touched task, our changes
// included, sorted by task.
struct NodeState {
  int64_t task_ref = 0;
  TaskState state = TaskState::kPending;
  int retries = 0;
  bool permanent = false;
};
using TaskStates = std::vector<NodeState>;

// History and alert rows collected during an op, and the tasks it touched.
class WriteSet {
 public:
  // `expected_history`: history rows likely to be added (a capacity hint).
  explicit WriteSet(size_t expected_history = 0);
  Status AddHistory(WriteTxn& txn, const HistoryEntry& e);
  void AddAlert(WriteTxn& txn, const AlertEntry& a);
  void Touch(int64_t task_ref) { touched_.push_back(task_ref); }
  // Sorted, each task once, after Flush.
  const std::vector<int64_t>& touched() const { return touched_; }

  // Queues the history and the alerts collected so far.
  void FlushLog(WriteTxn& txn);
  // Queues the dirty rows (compare-and-set on the version they were loaded
  // with), then FlushLog, and reads the node states of the
  // touched tasks that have more than one node; the rest come from `rows`.
  // kInternal if a compare-and-set failed (the lock was lost).
  Result<TaskStates> Flush(WriteTxn& txn, RowMap& rows, const TaskMap& tasks);

 private:
  sql::RowSet history_;
  sql::RowSet alerts_;
  std::vector<int64_t> touched_;
};

// A touched task's roll-up as RecomputeTasks decided it.
struct Rollup {
  TaskState status = TaskState::kPending;
  int nodes = 0;         // its node rows
  bool written = false;  // it changed, and was written
};
using Rollups = std::unordered_map<int64_t, Rollup>;  // by task_ref

// Recomputes the roll-up of each touched task from `states` (tasks as locked
// by LoadRows); when a task becomes settled, makes its PENDING dependents
// due (all deps succeeded) or marks them upstream_failed. Each roll-up goes
// to `out` when given.
Status RecomputeTasks(WriteTxn& txn, const std::vector<int64_t>& touched, const TaskMap& tasks,
                      const TaskStates& states, Rollups* out = nullptr);

// The dirty rows of `rows` as the commit will leave them, one TaskChange
// per task (task_change.h; status and node_count still to fill in from the
// roll-up). Taken before WriteSet::Flush, which forgets what was written.
// `node_ids`: node_ref -> node_id of every row's node.
std::unordered_map<int64_t, TaskChange> ChangesOf(
    const RowMap& rows, const std::unordered_map<int64_t, std::string_view>& node_ids);

}  // namespace apollo::store::engine
