#pragma once

// apollo.v1.TaskSpec <-> TaskSpec: a task file's task as typed fields
// (issue 18), for a client that has its tasks as values and need not write
// YAML for the orchestrator to parse (SubmitTasksRequest.specs).
//
// TaskSpecsFromProto checks every spec with the task file's own rules
// (task_spec_rules.h), so a typed spec is refused exactly when the same task
// in a file would be, with the same message. Every problem is reported at
// once, as a Diagnostic without a position (line 0, column 0) that carries
// task_index and a message beginning "task N (id X): " (N from 1).
//
// Thread-safety: pure functions.

#include <google/protobuf/repeated_ptr_field.h>

#include <optional>
#include <string_view>

#include "apollo/v1/api.pb.h"
#include "core/task_spec.h"

namespace apollo {

// `spec` as typed fields, its retry policy as explicit values (resolved
// presets; TaskSpecsFromProto gives the same spec back). A generated
// task_id (task_id_generated) is sent empty, to be generated again; the
// orchestrator's own `compensates` is never sent.
void TaskSpecToProto(const TaskSpec& spec, v1::TaskSpec* out);

// The same, with the retry policy as the file wrote it
// (ParsedTasks::retry_written): presets by name, and none where the file
// had none, so the server's presets and default policy apply, as they do
// to the file.
void TaskSpecToProto(const TaskSpec& spec, const std::optional<RetryPolicySource>& retry_written,
                     v1::TaskSpec* out);

// The specs of one request, checked like ParseTaskFile checks a file:
// `file_name` goes into each Diagnostic; the limits bound the specs'
// serialized size (max_file_bytes) and count (max_tasks), and each task's
// params and metadata; `external_task_exists` and `presets` as for
// ParseTaskFile. On success every task is complete except a missing task_id
// (task_id_generated); intent_at and retry_written are left empty.
ParsedTasks TaskSpecsFromProto(const google::protobuf::RepeatedPtrField<v1::TaskSpec>& specs,
                               std::string_view file_name, const ParseLimits& limits = {},
                               const ExternalTaskLookup& external_task_exists = nullptr,
                               const RetryPresets* presets = nullptr);

}  // namespace apollo
