#pragma once

// Row-level building blocks of the PostgreSQL write paths, set-based so a
// batch of N events costs a handful of statements, not N round trips:
//  - LoadRows locks (FOR UPDATE, in key order) and reads every (task, node)
//    row a batch touches in one statement;
//  - changes are made to those rows in memory, in order, exactly as the
//    SQLite backend makes them one by one;
//  - WriteSet::Flush writes the changed rows (compare-and-set on the version
//    each was loaded with), the history and the alerts, one statement each.
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
#include "store/postgres/writer.h"
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

// Locks and loads the rows that exist among `keys`.
RowMap LoadRows(WriteTxn& txn, const std::set<RowKey>& keys);

// A new value for a row (state change). Mirrors the SQLite backend.
struct RowChange {
  TaskState to = TaskState::kPending;
  uint32_t attempt = 0;
  int retries = 0;
  DueKind due_kind = DueKind::kNone;
  std::optional<int64_t> due_at;
  std::string blocked_reason;
  std::optional<std::string> last_error;
  std::optional<std::string> result;  // stored apart when > 1 KiB
};

// Where `to` leaves the row waiting: due kind, due time, blocked reason.
void FillDue(const PgRow& cur, TaskState to, TimePoint now,
             std::optional<TimePoint> ack_deadline, std::optional<TimePoint> next_attempt_at,
             int retries, RowChange& change);

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

// History and alert rows collected during an op, written by Flush.
class WriteSet {
 public:
  void AddHistory(WriteTxn& txn, const HistoryEntry& e);
  void AddAlert(const AlertEntry& a);
  void Touch(int64_t task_ref) { touched_.insert(task_ref); }
  const std::set<int64_t>& touched() const { return touched_; }

  // Writes the dirty rows (kInternal if a CAS fails: the lock was lost),
  // then history and alerts.
  Status Flush(WriteTxn& txn, RowMap& rows);

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

// Recomputes roll-up status and settled time of each task (locking the task
// rows in order); when a task becomes settled, makes its PENDING dependents
// due (all deps succeeded) or marks them upstream_failed.
Status RecomputeTasks(WriteTxn& txn, const std::set<int64_t>& task_refs);

// The error text of a FAILED/TIMEOUT/REJECTED payload (same rule as SQLite).
std::string ErrorFromPayload(std::string_view payload);

}  // namespace apollo::store::postgres
