#pragma once

// What one commit left of a task's rows, handed over by the store the
// moment it committed (StateStore::SetCommitListener), so a watcher of the
// task can bring the copy it read up to date without reading it again.
//
// A change carries every column of each node row the commit wrote, and the
// task's roll-up after it. Text columns the commit did not write are left
// out (unset): they keep the value the watcher already has. A result that
// went to the payload table (over kInlinePayloadMax) is not carried: the
// watcher must read the task for it.
//
// CatchUp is the one place that applies a change to a TaskRow; a test
// (store_conformance_more_test.cc) holds it to what GetTask reads after the
// same commit, on both backends.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/task_state.h"
#include "store/types.h"

namespace apollo::store {

struct NodeRowChange {
  std::string node_id;
  TaskState state = TaskState::kPending;
  int64_t from_version = 0;  // the row's version before the commit
  int64_t version = 0;
  uint32_t attempt = 0;
  int retries = 0;
  TimePoint updated_at{};
  DueKind due_kind = DueKind::kNone;
  std::optional<TimePoint> due_at;
  std::optional<TimePoint> start_deadline;
  int extensions = 0;
  bool permanent = false;
  // Set: the value the commit wrote; unset: unchanged.
  std::optional<std::string> last_error;
  std::optional<std::string> blocked_reason;
  std::optional<std::string> result;
  bool result_elsewhere = false;  // written to the payload table: read the task
};

struct TaskChange {
  std::string task_id;
  TaskState status = TaskState::kPending;  // the roll-up after the commit
  std::optional<TimePoint> status_at;      // set: the roll-up was written then
  int node_count = 0;                      // node rows of the task (all of them)
  std::vector<NodeRowChange> nodes;        // the rows the commit wrote
};

// Brings `row`, a task as read, up to the commit `c`. A commit the read
// already holds (every row's version at least the change's) leaves it as
// it is. Returns false, `row` untouched, when the change cannot be applied
// alone and the task must be read again: it is another task, it does not
// cover every node row, it names a node the copy lacks, the copy is not at
// the version the commit started from (a change in between was not seen:
// the columns the commit left alone may be out of date), it is only partly
// newer than the copy, its result is in the payload table, or the task has
// a rollout (whose tally the change does not carry).
bool CatchUp(TaskRow& row, const TaskChange& c);

}  // namespace apollo::store
