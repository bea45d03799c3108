#pragma once

// Plain rows and requests exchanged with a StateStore. Values only: every
// backend produces and consumes exactly these, so the conformance suite and
// the orchestrator never see a backend's own types.
//
// Thread-safety: values; safe to copy between threads.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/event.h"
#include "core/task_spec.h"
#include "core/task_state.h"

namespace apollo::store {

// Payloads larger than this are kept in a side table and referenced from the
// hot rows (task_nodes, history); queries resolve the reference for callers.
inline constexpr size_t kInlinePayloadMax = 1024;

// ---------------------------------------------------------------- tasks --

// One task to create, with the nodes its selector resolved to.
struct NewTask {
  TaskSpec spec;
  std::vector<std::string> node_ids;  // one (task, node) row each, PENDING
};

struct CreatedTask {
  std::string task_id;
  // False: the task already existed with the same canonical spec and this
  // call changed nothing (idempotent resubmission).
  bool created = false;
};

// What a (task, node) row is waiting for, and when. Maintained by the store
// on every change so DueWork is an index range scan.
enum class DueKind : int {
  kNone = 0,
  kDispatch = 1,        // PENDING, dependencies met: send it
  kAckTimeout = 2,      // DISPATCHED (or re-sent RETRYING) not acknowledged
  kExecTimeout = 3,     // RUNNING past the task's timeout
  kRetry = 4,           // RETRYING and next_attempt_at has come
  kRetryDecision = 5,   // FAILED/TIMEOUT with retries left: decide now
  kUpstreamFailed = 6,  // PENDING but a dependency ended without success
};
std::string_view DueKindName(DueKind k);

struct NodeRow {
  std::string task_id;
  std::string node_id;
  TaskState state = TaskState::kPending;
  int64_t version = 1;      // 1 at creation, +1 on every change
  uint32_t attempt = 0;     // 0 until first dispatch, then 1, 2, ...
  int retries = 0;          // retries granted so far
  TimePoint created_at{};
  TimePoint updated_at{};
  std::string last_error;   // from the last FAILED/TIMEOUT/REJECTED, or ""
  std::string result;       // payload of the SUCCEEDED event (resolved)
  std::optional<int64_t> result_ref;  // side-table id when result > 1 KiB
  std::string blocked_reason;         // why a non-final row is not moving
  DueKind due_kind = DueKind::kNone;
  std::optional<TimePoint> due_at;    // when due_kind becomes actionable
};

struct TaskRow {
  TaskSpec spec;
  TaskState status = TaskState::kPending;  // RollUp of the node states
  TimePoint created_at{};
  TimePoint updated_at{};
  std::vector<NodeRow> nodes;  // ordered by node_id
};

struct TaskSummary {
  std::string task_id;
  std::string intent;
  TaskState status = TaskState::kPending;
  TimePoint created_at{};
  TimePoint updated_at{};
};

// Filters are ANDed; unset means "any". Paging is keyset-based: pass the
// previous page's next_page_token back to continue.
struct TaskQuery {
  std::optional<TaskState> status;
  std::optional<std::string> intent;
  std::optional<TimePoint> created_after;   // inclusive
  std::optional<TimePoint> created_before;  // exclusive
  int limit = 100;                           // 1..1000
  std::string page_token;
};

struct TaskPage {
  std::vector<TaskSummary> tasks;  // newest first
  std::string next_page_token;     // empty: no more
};

// -------------------------------------------------------------- history --

// Why a history row exists.
enum class Cause : int {
  kEvent = 1,       // an agent event (event_id set)
  kDispatch = 2,    // orchestrator sent the intent (attempt set)
  kAckTimeout = 3,  // not acknowledged in time
  kExecTimeout = 4, // ran too long
  kRetry = 5,       // policy granted a retry
  kCancel = 6,      // operator or upstream cancel
  kOperator = 7,    // operator retry or other manual action
  kReconcile = 8,   // snapshot reconciliation
  kCreate = 9,      // row created
  kCallback = 10,   // the task's callback_url was notified (or gave up)
};
std::string_view CauseName(Cause c);

// What happened to one event or transition request.
enum class Outcome : int {
  kApplied = 0,          // state (or info) recorded, version +1 if changed
  kDuplicate = 1,        // event seen before (id or high-water mark)
  kStaleAttempt = 2,     // attempt != row's attempt: in history, no change
  kIllegalTransition = 3,// refused by CheckTransition: alert + history
  kUnknownTask = 4,      // no such (task, node): alert
  kMalformed = 5,        // ValidateEvent failed: alert
  kVersionConflict = 6,  // Transition's expected_version did not match
};
std::string_view OutcomeName(Outcome o);



struct HistoryRow {
  int64_t id = 0;  // increasing in commit order, store-wide
  std::string task_id;
  std::string node_id;
  Cause cause = Cause::kEvent;
  Outcome outcome = Outcome::kApplied;
  std::string event_id;  // for kEvent, else ""
  std::optional<EventType> event_type;
  uint32_t attempt = 0;
  TaskState from = TaskState::kPending;
  TaskState to = TaskState::kPending;  // == from when nothing changed
  int64_t version = 0;                 // row version after this entry
  TimePoint at{};                      // store clock when recorded
  std::string detail;                  // reason, operator note, ...
  std::string payload;                 // resolved, even when stored apart
};

// ---------------------------------------------------------------- apply --

struct EventOutcome {
  Outcome outcome = Outcome::kApplied;
  std::string reason;  // empty when applied
  std::optional<TaskState> from;
  std::optional<TaskState> to;
  int64_t version = 0;  // row version after the event (0 if no row)
};

struct ApplyResult {
  std::vector<EventOutcome> outcomes;  // one per event, same order
  // Per node in the batch: the contiguous high-water mark after the commit,
  // i.e. what the gateway may acknowledge to that agent.
  std::map<std::string, uint64_t> acked_seq;
};

// An orchestrator-driven change of one (task, node) row. Checked with
// CheckTransition like an event and appended to the history with `cause`.
struct TransitionRequest {
  std::string task_id;
  std::string node_id;
  // The state to move to. nullopt: no state change, only the fields below
  // (e.g. a RETRYING row re-sent by the dispatcher: attempt + ack deadline).
  std::optional<TaskState> to;
  Cause cause = Cause::kDispatch;
  // Compare-and-set: when set, refused (kVersionConflict) unless equal.
  std::optional<int64_t> expected_version;
  // Dispatch: bump attempt to row.attempt + 1 and wait for an ack until then.
  bool new_attempt = false;
  std::optional<TimePoint> ack_deadline;
  // Retry (to RETRYING): retries + 1, next dispatch at this time.
  std::optional<TimePoint> next_attempt_at;
  std::optional<std::string> blocked_reason;  // replaces the current one
  std::string detail;                         // history detail / last_error
};

// ---------------------------------------------------------------- nodes --

struct NodeInfo {
  std::string node_id;
  std::map<std::string, std::string> labels;
  std::vector<std::string> groups;
  std::vector<std::string> intents;  // intents the agent can run
  std::string mode;                  // "normal", "conservative", ...
  std::string agent_version;
  std::optional<TimePoint> last_heartbeat;
  // False for a node named by a task before it ever registered.
  bool registered = true;
};

// A node's heartbeat, for RecordHeartbeats.
struct NodeHeartbeat {
  std::string node_id;
  TimePoint at;
  std::string mode;  // empty: unchanged
};

// ----------------------------------------------------- alerts, retention --

struct AlertRow {
  int64_t id = 0;
  std::string kind;  // "illegal_transition", "unknown_task", "malformed", ...
  std::string task_id;
  std::string node_id;
  std::optional<TaskState> from;
  std::optional<TaskState> to;
  std::string event_id;
  std::string detail;
  TimePoint at{};
};

struct RetentionPolicy {
  Duration dedup_horizon = std::chrono::hours(24);
  Duration history_horizon = std::chrono::hours(24 * 7);
};

struct PurgeStats {
  int64_t history_rows = 0;
  int64_t dedup_rows = 0;
  int64_t payload_rows = 0;
  int64_t alert_rows = 0;
};

struct DueItem {
  std::string task_id;
  std::string node_id;
  DueKind kind = DueKind::kNone;
  TimePoint due_at{};
  TaskState state = TaskState::kPending;
  int64_t version = 0;
  uint32_t attempt = 0;
  int retries = 0;
  Priority priority = Priority::kNormal;
};

// Counters since the store was opened (not persisted).
struct StoreStats {
  int64_t events_applied = 0;
  int64_t events_duplicate = 0;
  int64_t events_stale = 0;
  int64_t illegal_transitions = 0;
  int64_t unknown_task = 0;
  int64_t malformed = 0;
  int64_t commits = 0;
};

}  // namespace apollo::store
