#pragma once

// `task watch`: when to stop, and what to print as a task progresses. Pure
// (no I/O), so the logic is tested without a server.

#include <map>
#include <string>

#include "apollo/v1/api.pb.h"

namespace apollo::cli {

// True when the task can no longer change by itself: its roll-up is
// SUCCEEDED or CANCELLED, or FAILED/TIMEOUT with no node still PENDING,
// DISPATCHED, RUNNING or RETRYING, and (when spec_json carries
// retry_policy.max_retries) no FAILED/TIMEOUT node with retries left: the
// same rule as the server's end of WatchTask. (A FAILED task can still be
// retried by an operator; the watch stops anyway and says so through its
// exit code.)
bool IsWatchFinal(const v1::Task& task);

// Turns successive snapshots of one task into progress lines, printing only
// what changed since the previous snapshot:
//   "<updated_at>  <node>  <STATUS>  attempt N[  retries R][  blocked: B][  error: E]"
// per changed node, then "task ID: STATUS" when the roll-up changed.
// A node's line is reprinted only when something other than its time changed.
// Not thread-safe.
class WatchPrinter {
 public:
  std::string Update(const v1::Task& task);

 private:
  std::string status_;                        // last roll-up printed
  std::map<std::string, std::string> nodes_;  // node_id -> last line, minus time
};

}  // namespace apollo::cli
