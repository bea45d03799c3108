#pragma once

// What holds a task's PENDING rows back besides their dependencies: an
// operator's hold (task_status.held_by) and the rollout batch not yet
// opened (task_nodes.batch > task_status.open_batch). A row may be
// dispatched once every gate is open; RegateTask re-decides every PENDING
// row of one task after a gate moved (a batch opened, a hold set or
// released, a dependency added or removed), so each write path that moves a
// gate only changes its own column and calls it. Writer thread only.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/engine/write_txn.h"
#include "store/types.h"

namespace apollo::store::engine {

// The task_ref of `task_id`; kNotFound if there is none.
Result<int64_t> FindTask(WriteTxn& txn, std::string_view task_id);

// A gate moved by the caller's op, written by RegateTask after it locked
// the rows (rows first, then task_status: the order events lock in).
struct GateMove {
  std::optional<int> open_batch;
  std::optional<std::string> held_by;
};

// Moves `move`'s gates, then re-decides the task's PENDING rows that wait
// for nothing else (not upstream_failed): due for dispatch, or blocked
// with the gate's reason.
// Each row whose decision changed gets version + 1 (so a dispatch pass that
// read it before loses its compare-and-set) and a history row with `cause`
// and `detail` followed by what it now waits for. Returns how many rows
// changed.
Result<int> RegateTask(WriteTxn& txn, int64_t task_ref, const GateMove& move, Cause cause,
                       const std::string& detail);

// A history entry about the task as a whole (node_id "" when read back):
// an operator's pause, hold or dependency change. `status`: the task's.
Status AddTaskHistory(WriteTxn& txn, int64_t task_ref, Cause cause, TaskState status,
                      const std::string& detail);

// The hold an aborted rollout puts on its task (rows show "held_by
// rollout_aborted" until the orchestrator cancels them).
inline constexpr std::string_view kRolloutAbortedHold = "rollout_aborted";

// The reason a row of batch `batch` waits for its rollout.
std::string RolloutWaitReason(int batch);

}  // namespace apollo::store::engine
