#pragma once

// Row-level building blocks shared by the write paths (apply, transition,
// create): load a (task, node) row, change it by compare-and-set, append
// history, raise alerts, keep task roll-ups and dependents' due times right.
// All run on the writer thread inside the current transaction.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/event.h"
#include "core/task_state.h"
#include "store/sqlite/writer.h"
#include "store/row_change.h"
#include "store/types.h"

namespace apollo::store::sqlite {

// The hot fields of one task_nodes row and what the task says about it.
struct RowState {
  int64_t task_ref = 0;
  int64_t node_ref = 0;
  TaskState state = TaskState::kPending;
  int64_t version = 0;
  uint32_t attempt = 0;
  int retries = 0;
  int64_t timeout_us = 0;
  int max_retries = 0;
  DueKind due_kind = DueKind::kNone;
  // The task's roll-up as stored, and how many nodes it has.
  TaskState task_status = TaskState::kPending;
  bool task_settled = false;
  int64_t node_count = 0;
};

// nullopt when the task or its row for this node does not exist.
Result<std::optional<RowState>> LoadRow(WriteTxn& txn, std::string_view task_id,
                                        int64_t node_ref);

// A new value for a row. Fields left unset keep their current value.


// Compare-and-set on cur.version; false if the row moved meanwhile.
Result<bool> UpdateRow(WriteTxn& txn, const RowState& cur, const RowChange& change);

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

Status AppendHistory(WriteTxn& txn, const HistoryEntry& entry);

// Stores `body` in the payload side table; returns its id.
Result<int64_t> StorePayload(WriteTxn& txn, int64_t task_ref, std::string_view body);

struct AlertEntry {
  std::string_view kind;
  std::string_view task_id;
  std::string_view node_id;
  std::optional<TaskState> from;
  std::optional<TaskState> to;
  std::string_view event_id;
  std::string_view detail;
};
Status AddAlert(WriteTxn& txn, const AlertEntry& alert);

// After `row` changed to `to` (with `retries`): updates the task's roll-up
// at once when it has a single node (no re-read needed), else adds the task
// to `touched` for RecomputeTasks at the end of the op.
Status NoteRowChanged(WriteTxn& txn, const RowState& row, TaskState to, int retries,
                      std::set<int64_t>& touched);

// Recomputes roll-up status and settled time of each task; when a task
// becomes settled, makes its PENDING dependents due (all deps succeeded) or
// marks them upstream_failed.
Status RecomputeTasks(WriteTxn& txn, const std::set<int64_t>& task_refs);

// JSON text that never throws: invalid UTF-8 (an agent's label, a payload)
// is replaced rather than aborting the writer.
std::string SafeDump(const nlohmann::json& j);


}  // namespace apollo::store::sqlite
