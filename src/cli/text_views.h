#pragma once

// The human (default, `-o text`) output of each apollo-cli command, built
// from the operator API's messages. Pure functions returning whole lines.
// Every server-supplied string is passed through OneLine().

#include <string>

#include "apollo/v1/api.pb.h"

namespace apollo::cli {

// `task status`: a header line "task ID: STATUS (intent I, N nodes)" then
// the table NODE STATUS ATTEMPT RETRIES UPDATED LAST_ERROR BLOCKED_REASON.
std::string TaskStatusText(const v1::Task& task);

// `task list`: TASK_ID STATUS INTENT CREATED, "no tasks" when empty, and a
// hint naming --page-token when the server has more.
std::string TaskListText(const v1::ListTasksResponse& resp);

// `task events`: TIME NODE TRANSITION ATTEMPT CAUSE DETAIL, in history
// order; TRANSITION is "FROM -> TO".
std::string HistoryText(const std::string& task_id, const v1::TaskEventsResponse& resp);

// `node list`: NODE LIVENESS MODE CONNECTED RUNNING LAST_HEARTBEAT LABELS
// GROUPS; labels as sorted "k=v,k=v", groups comma-separated.
std::string NodesText(const v1::ListNodesResponse& resp);

// `task submit`, the stdout part: one line per task ("task ID: created,
// N nodes: a, b" / "already submitted (unchanged)" / on a dry run "would
// target N nodes: ..."), then on a dry run "dry run: nothing was stored".
std::string SubmitText(const v1::SubmitTasksResponse& resp, bool dry_run);

// `task submit`, the stderr part: each server diagnostic as
// "file:line:column: message", then each warning as "warning: ...".
std::string SubmitProblemsText(const v1::SubmitTasksResponse& resp);

}  // namespace apollo::cli
