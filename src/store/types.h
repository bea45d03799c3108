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
#include "core/rollout.h"
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
  // The schedule-to-start deadline in force: the spec's start_timeout, or
  // the orchestrator's default when the spec has none; 0: wait forever.
  std::chrono::seconds start_timeout{0};
  // Dispatch on create: the nodes (of node_ids) the caller has a ready
  // session to and will send attempt 1 to once the create committed. Their
  // rows are created DISPATCHED (attempt 1, awaiting the ack by
  // ack_deadline) in the create's own transaction, as if a dispatch pass
  // had moved them: one commit for both. A row that cannot start yet (a
  // dependency not SUCCEEDED, a node never registered) is created PENDING
  // as usual and left to the dispatcher.
  std::vector<std::string> dispatch_now{};
  TimePoint ack_deadline{};  // with dispatch_now
};

struct CreatedTask {
  std::string task_id;
  // False: the task already existed with the same canonical spec and this
  // call changed nothing (idempotent resubmission).
  bool created = false;
  // The nodes of NewTask::dispatch_now whose rows were created DISPATCHED:
  // the caller sends them attempt 1 now (the ack timeout resends otherwise).
  std::vector<std::string> dispatched{};
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
  kCompensate = 7,      // FAILED/TIMEOUT for good, the task has on_failure:
                        // start the compensation (then Transition compensated)
  kDeliverCancel = 8,   // CANCELLED through a replica that does not hold the
                        // node's session: the leader tells the agent (then
                        // Transition cancel_delivered)
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
  // Must be RUNNING by then (start_timeout), while PENDING (dependencies
  // met), DISPATCHED or RETRYING; none once running.
  std::optional<TimePoint> start_deadline;
  int extensions = 0;      // execution timeouts extended (progress seen)
  bool permanent = false;  // FAILED with a permanent kind: no retry
  int batch = 0;           // its rollout batch (1..), 0: the task has none
};

// A rollout's progress (core/rollout.h). Batches 1..open_batch may run.
struct RolloutRow {
  std::string task_id;
  RolloutState state = RolloutState::kRunning;
  int open_batch = 1;
  int batches = 0;
  std::string paused_by;             // who paused it ("failure budget" when breached)
  std::string reason;                // why, as they said it
  std::optional<TimePoint> next_at;  // kWaiting: when the next batch opens
  int tolerated = 0;                 // failures a resume after a breach accepted
  int64_t version = 1;               // +1 on every change
  TimePoint updated_at{};
};

struct TaskRow {
  TaskSpec spec;
  TaskState status = TaskState::kPending;  // RollUp of the node states
  std::chrono::seconds start_timeout{0};   // in force (NewTask::start_timeout)
  std::optional<RolloutRow> rollout;       // with spec.rollout
  std::string held_by;                     // an operator's hold ("": none)
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
  std::map<std::string, std::string> metadata;  // the spec's
};

// Filters are ANDed; unset means "any". Paging is keyset-based: pass the
// previous page's next_page_token back to continue.
struct TaskQuery {
  std::optional<TaskState> status;
  std::optional<std::string> intent;
  std::optional<TimePoint> created_after;   // inclusive
  std::optional<TimePoint> created_before;  // exclusive
  // The spec's metadata has each key with exactly this value (at most
  // kMaxMetadataFilters).
  std::map<std::string, std::string> metadata;
  int limit = 100;                           // 1..1000
  std::string page_token;
};

inline constexpr size_t kMaxMetadataFilters = 4;

struct TaskPage {
  std::vector<TaskSummary> tasks;  // newest first
  std::string next_page_token;     // empty: no more
};

// -------------------------------------------------------------- history --

// Why a history row exists.
enum class Cause : int {
  kEvent = 1,            // an agent event (event_id set)
  kDispatch = 2,         // orchestrator sent the intent (attempt set)
  kAckTimeout = 3,       // not acknowledged in time
  kExecTimeout = 4,      // ran too long
  kRetry = 5,            // policy granted a retry
  kCancel = 6,           // operator or upstream cancel
  kOperator = 7,         // operator retry or other manual action
  kReconcile = 8,        // snapshot reconciliation
  kCreate = 9,           // row created
  kCallback = 10,        // the task's callback_url was notified (or gave up)
  kNotStarted = 11,      // not RUNNING within the task's start_timeout
  kExtended = 12,        // execution timeout extended: the run still progresses
  kCompensation = 13,    // a compensation task started for this row
  kUpstreamFailed = 14,  // cancelled: a task it depends on ended without success
  kRollout = 15,         // its rollout moved (a batch opened, paused, resumed, ...)
  kRolloutAborted = 16,  // cancelled: its rollout was aborted before it started
  kDagChange = 17,       // an operator changed its dependencies, or held/released it
  kFollow = 18,          // row added: the node came to match a following selector
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
  // The leader lease epoch whose fenced write recorded it (0: unfenced, e.g.
  // an agent's event or a single orchestrator's write). Several
  // orchestrators: within one task the entries of an epoch all come before
  // those of the next (store/lease.h).
  int64_t epoch = 0;
};

// UpdateRollout: the rollout's next state, compare-and-set on its version.
struct RolloutChange {
  std::string task_id;
  int64_t expected_version = 0;
  RolloutState state = RolloutState::kRunning;
  int open_batch = 1;  // never below the current one; above it opens batches
  std::string paused_by;
  std::string reason;
  std::optional<TimePoint> next_at;
  int tolerated = 0;
  // Written with `cause` in the history of every row still waiting for the
  // rollout (PENDING in a batch not yet open before this change); "": none.
  Cause cause = Cause::kRollout;
  std::string detail;
};

// ChangeDependencies: a task not started yet gets new dependencies and/or
// loses some. Recorded as one history entry naming `who` (and `reason`).
struct DependencyChange {
  std::string task_id;
  std::vector<std::string> add;
  std::vector<std::string> remove;
  std::string who;
  std::string reason;
};

// HoldTask: an operator's hold on the rows of a task not started yet
// (blocked_reason "held_by <who>"), or its release.
struct HoldChange {
  std::string task_id;
  bool hold = true;  // false: release
  std::string who;
  std::string reason;
};

// A task whose label or group selector follows the fleet.
struct FollowingTask {
  std::string task_id;
  TargetSelector selector;
  std::chrono::seconds start_timeout{0};
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
  // A RUNNING row's execution deadline moved (to = nullopt): exec_timeout
  // becomes due then; with `extend`, it counts as an extension.
  std::optional<TimePoint> exec_deadline;
  bool extend = false;
  // The row's compensation task exists (to = nullopt): kCompensate is done.
  bool compensated = false;
  // To CANCELLED, made where the node's session is not (a follower): the
  // row becomes due kDeliverCancel, so the leader tells the agent to stop.
  bool deliver_cancel = false;
  // The leader told the agent, or found it away (to = nullopt; the agent's
  // sync on reconnect stops the run then): kDeliverCancel is done.
  bool cancel_delivered = false;
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
  std::vector<std::string> disabled_intents;  // built-ins it has turned off
};

// A node's heartbeat, for RecordHeartbeats.
struct NodeHeartbeat {
  std::string node_id;
  TimePoint at;
  std::string mode;  // empty: unchanged
};

// ----------------------------------------------------- alerts, retention --

// Where an alert's webhook delivery stands.
enum class AlertDelivery : int {
  kPending = 0,  // not delivered yet (or no webhook configured)
  kDelivered = 1,
  kFailing = 2,  // failed, retried at next_delivery_at
  kGaveUp = 3,   // failed too many times
};
std::string_view AlertDeliveryName(AlertDelivery d);

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
  // Webhook delivery (store-kept so a restart resumes it).
  AlertDelivery delivery = AlertDelivery::kPending;
  int attempts = 0;
  std::string delivery_detail;  // the last outcome, e.g. "HTTP 503"
  std::optional<TimePoint> next_delivery_at;
};

// What Purge deletes, each older than its horizon. A task is purged whole
// (rows, history, payloads) once it settled; nothing of an unsettled task
// is ever touched.
struct RetentionPolicy {
  Duration dedup_horizon = std::chrono::hours(24);
  Duration history_horizon = std::chrono::hours(24 * 7);  // settled tasks
  Duration alert_horizon = std::chrono::hours(24 * 7);
  Duration dead_letter_horizon = std::chrono::hours(24 * 30);
  Duration audit_horizon = std::chrono::hours(24 * 90);
  int batch = 500;  // tasks (and rows of each other kind) per call at most
};

struct PurgeStats {
  int64_t tasks = 0;
  int64_t history_rows = 0;
  int64_t dedup_rows = 0;
  int64_t payload_rows = 0;
  int64_t alert_rows = 0;
  int64_t dead_letters = 0;
  int64_t audit_rows = 0;
  // True when a horizon still had more than `batch` to delete.
  bool more = false;
};

// ---------------------------------------------------------- tokens, audit --

// An operator token. Only its hash is kept; the token itself is shown once.
struct TokenRow {
  std::string name;
  std::string role;  // "viewer", "operator", "admin"
  std::string hash;  // hex SHA-256 of the token
  TimePoint created_at{};
  std::optional<TimePoint> expires_at;
  std::optional<TimePoint> revoked_at;
  std::string created_by;
};

// One mutating operator call: who, what, on what, from where, outcome.
struct AuditRow {
  int64_t id = 0;
  TimePoint at{};
  std::string who;          // token name ("" without ACLs)
  std::string action;       // e.g. "task.submit"
  std::string target;       // e.g. the task id
  std::string args_digest;  // hex SHA-256 of the request
  std::string peer;         // where the call came from
  std::string outcome;      // "ok" or the error code and message
};

struct AuditQuery {
  std::string who;                 // "": anyone
  std::optional<TimePoint> since;  // inclusive
  int64_t after_id = 0;
  int limit = 100;
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
  std::optional<TimePoint> start_deadline;  // see NodeRow
  int extensions = 0;
  std::string blocked_reason;  // what the row says it waits for ("" if nothing)
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
