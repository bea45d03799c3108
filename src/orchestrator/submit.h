#pragma once

// Submission: a task file's text, or typed specs (issue 18: no YAML to
// parse) -> validated specs -> resolved target nodes -> tasks in the store
// (or, for a dry run, only the resolution).
//
// Thread-safety: a free function over thread-safe collaborators.

#include <functional>

#include "apollo/v1/api.pb.h"
#include "core/task_id.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

// "label role=web", "group edge", "nodes": a selector in messages.
std::string DescribeSelector(const TargetSelector& s);

struct SubmitOptions {
  // Named retry policies a task file may use (nullptr: the built-in ones).
  const RetryPresets* presets = nullptr;
  // The schedule-to-start deadline of a task that sets no start_timeout.
  std::chrono::seconds default_start_timeout{600};
  // If set, stored in the same transaction as the tasks, with the tasks'
  // ids as its target (StateStore::CreateTasksAudited): when the call
  // returns OK with no errors and not dry_run, the call is audited.
  const store::AuditRow* audit = nullptr;
  // Dispatch on create (may be empty): called for each task about to be
  // created; sets NewTask::dispatch_now to the nodes that may be sent
  // attempt 1 at once (the orchestrator: those with a ready session).
  std::function<void(store::NewTask&)> plan_dispatch;
};

// Fills `resp`. Problems with the file go into resp->errors (nothing is
// stored then); a failing store is returned as the Status, and a request
// with both content and specs as InvalidArgument. Typed specs are checked
// by the file's rules (task_spec_proto.h); their diagnostics have no line
// (0) and carry task_index, as does every problem with one task found here. `stored`, if
// given, receives every task (spec and nodes) the store now holds from this
// call (created, or already there with the same canonical spec), so the
// caller can cache them instead of reading them back; each one's
// dispatch_now then holds the nodes whose rows the create dispatched (the
// caller sends them attempt 1), empty for a task that already existed.
//
// An intent that none of a task's matched nodes advertises (misspelt, or
// disabled there) is an error naming the closest intent they do run,
// unless req.force; a node that has not said what it runs is not judged.
Status SubmitTaskFile(const apollo::v1::SubmitTasksRequest& req, const SubmitOptions& options,
                      store::StateStore& store, TaskIdGenerator& ids,
                      apollo::v1::SubmitTasksResponse* resp,
                      std::vector<store::NewTask>* stored = nullptr);

}  // namespace apollo::orchestrator
