#pragma once

// StateStore: the single source of truth for tasks, their per-node state
// machines, the history of every change, nodes, alerts and dead letters.
//
// Contracts every backend keeps (checked by store_conformance_test.cc):
//  - Durability: when a write call returns OK (or its future completes OK),
//    the change is committed durably (SQLite: WAL + synchronous=FULL by
//    default). A write call is atomic: after a crash either all of it or none
//    of it is visible.
//  - Every state change passes core's CheckTransition inside the write
//    transaction, bumps the row's version by exactly 1 and appends a history
//    row with its cause. Nothing else changes state. An agent's finished run
//    reported while the row awaits its ack walks the legal path through
//    RUNNING (core AgentReportPath): one version and one history row per step.
//  - Events are deduplicated by event_id and by a per-node contiguous
//    high-water mark of sequence numbers; an event whose attempt differs from
//    the row's current attempt is recorded as stale and changes nothing.
//  - Per-event problems (duplicate, stale, illegal, unknown task, malformed)
//    are outcomes, never errors, and never abort the rest of a batch.
//    Illegal / unknown / malformed also write an alert row.
//  - Errors: kUnavailable (database unreachable or busy: retry the call),
//    kInvalidArgument (bad request), kAlreadyExists (task_id reused with a
//    different spec), kNotFound, kInternal (a broken invariant).
//
// Time comes from the Clock passed to OpenStateStore: deadlines, updated_at
// and history timestamps are the store's clock, never the agent's.
//
// Thread-safety: every method may be called from any thread concurrently.
// Concurrent writers are batched into shared transactions (group commit).

#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/status.h"
#include "core/task_spec.h"
#include "store/dead_letter.h"
#include "store/lease.h"
#include "store/task_change.h"
#include "store/types.h"

namespace apollo::store {

// Told, on the store's writer thread, right after each commit that applied
// agent events, what the commit left of each task whose rows it changed
// (task_change.h). It must be quick and must not call the store.
using CommitListener = std::function<void(std::span<const TaskChange>)>;

class StateStore {
 public:
  virtual ~StateStore() = default;

  // ---- tasks

  // Creates each task with one PENDING row per node, all in one transaction.
  // Idempotent: a task_id that exists with the same CanonicalSpec is left as
  // is (created = false). The same task_id with another spec fails the whole
  // call with kAlreadyExists naming the task. Dependencies must name tasks
  // that exist or are in the same call (kInvalidArgument otherwise). Nodes
  // never registered are recorded as unregistered nodes.
  virtual Result<std::vector<CreatedTask>> CreateTasks(std::span<const NewTask> tasks) = 0;
  // CreateTasks with `audit` (the call that creates them) appended in the
  // same transaction: the row exists exactly when the tasks do, and costs
  // the submit no commit of its own.
  virtual Result<std::vector<CreatedTask>> CreateTasksAudited(std::span<const NewTask> tasks,
                                                              const AuditRow& audit) = 0;

  // ---- events and transitions

  // Applies a batch of agent events in order, each with its own outcome.
  // The future completes after the transaction holding the batch committed.
  // A node's events are always applied in one transaction; a store with
  // several event writers (PostgreSQL) may commit a batch spanning nodes as
  // one transaction per writer, and a failure of one part fails the call
  // while another part is committed: sending it again is safe (those events
  // are then duplicates).
  virtual std::future<Result<ApplyResult>> ApplyAsync(std::vector<Event> events) = 0;
  Result<ApplyResult> Apply(std::vector<Event> events) {
    return ApplyAsync(std::move(events)).get();
  }
  // Sets (or, with an empty one, clears) the listener of ApplyAsync's
  // commits, at any time; once it returns, the listener it replaced is not
  // running and will not be called again. Only the commits this store makes
  // are told (another process's writes to the same database are not). The
  // default keeps none: whoever waits for changes must poll.
  virtual void SetCommitListener(CommitListener listener) { (void)listener; }

  // Orchestrator-driven changes (dispatch, timeouts, retry, cancel, operator
  // retry), all in one transaction, one outcome each (kApplied,
  // kIllegalTransition, kVersionConflict, kUnknownTask).
  virtual Result<std::vector<EventOutcome>> Transition(
      std::span<const TransitionRequest> requests) = 0;

  // ---- queries (read committed data; never block on the writer)

  virtual Result<TaskRow> GetTask(std::string_view task_id) = 0;
  virtual Result<TaskPage> ListTasks(const TaskQuery& query) = 0;
  // Every (task, node) row of a node, newest task first, at most `limit`.
  virtual Result<std::vector<NodeRow>> ListNodeTasks(std::string_view node_id,
                                                     int limit) = 0;
  // The task's history in commit order.
  virtual Result<std::vector<HistoryRow>> GetHistory(std::string_view task_id) = 0;
  // Rows whose due time is <= now, earliest first, at most
  // `limit`. PENDING rows appear only once their dependencies succeeded.
  virtual Result<std::vector<DueItem>> DueWork(TimePoint now, int limit) = 0;
  // The node's contiguous high-water mark: every seq <= it is stored. 0 if
  // none. What the gateway puts in Welcome.
  virtual Result<uint64_t> HighestStoredSeq(std::string_view node_id) = 0;
  // Rows waiting to be run or acknowledged: PENDING, DISPATCHED and
  // RETRYING — the dispatch queue the orchestrator's watermarks measure.
  // A count over the rows: call it about once a second, not per event.
  virtual Result<int64_t> QueueDepth() = 0;
  // A payload stored apart (a result_ref).
  virtual Result<std::string> GetPayload(int64_t ref) = 0;

  // ---- rollouts (core/rollout.h)

  // Rollouts not aborted or completed (`active_only`), or all; by task age.
  virtual Result<std::vector<RolloutRow>> ListRollouts(bool active_only) = 0;
  // Moves a rollout (compare-and-set on its version: kFailedPrecondition if
  // it changed meanwhile; kNotFound for a task without one). Opening batches
  // makes their PENDING rows due, each with a history row; `detail`, if
  // any, is one history entry about the task (node_id "").
  virtual Status UpdateRollout(const RolloutChange& change) = 0;

  // ---- runtime DAG changes (tasks not started yet)

  // Adds and removes dependencies of a task whose rows are all PENDING, in
  // one transaction: kFailedPrecondition if it started, if a new
  // dependency ended without success, or if it would close a cycle (the
  // message names the cycle); kNotFound for an unknown task or a removed
  // dependency it does not have. Adding one it has is a no-op.
  virtual Status ChangeDependencies(const DependencyChange& change) = 0;
  // Holds the task's rows not started (blocked_reason "held_by <who>") or
  // releases them; kFailedPrecondition when already held / not held, or
  // (hold) when no row waits to start.
  virtual Status HoldTask(const HoldChange& change) = 0;

  // ---- selectors that follow the fleet

  // Tasks whose selector has follow: true and that were not cancelled.
  virtual Result<std::vector<FollowingTask>> ListFollowing() = 0;
  // Gives the task a PENDING row on `node_id` (history cause kFollow with
  // `detail`), due once its gates allow; false when the node has one
  // already (it is never given the task twice).
  virtual Result<bool> AddFollowRow(std::string_view task_id, std::string_view node_id,
                                    std::string_view detail) = 0;
  // The task no longer follows (it was cancelled).
  virtual Status StopFollowing(std::string_view task_id) = 0;

  // ---- nodes

  // Inserts or replaces the node's registration (and marks it registered).
  virtual Status UpsertNode(const NodeInfo& node) = 0;
  // Only the heartbeat time (and mode when non-empty); kNotFound if unknown.
  virtual Status RecordHeartbeat(std::string_view node_id, TimePoint at,
                                 std::string_view mode) = 0;
  // Many heartbeats in one transaction (the orchestrator writes them
  // periodically, not one commit each). Nodes not registered are skipped;
  // returns how many were recorded.
  virtual Result<int> RecordHeartbeats(std::span<const NodeHeartbeat> beats) = 0;
  virtual Result<std::vector<NodeInfo>> ListNodes() = 0;
  // Registered nodes matching the selector, sorted by node_id. kNodes returns
  // the listed ids as given (registered or not).
  virtual Result<std::vector<std::string>> ResolveSelector(const TargetSelector& sel) = 0;

  // ---- alerts, dead letters, retention

  virtual Result<std::vector<AlertRow>> ListAlerts(int64_t after_id, int limit) = 0;
  // Records an alert raised outside event ingestion (the reconciler, the
  // circuit breakers, the queue watermarks). kind, task_id, node_id,
  // from/to, event_id and detail are kept as given (task_id / node_id may be
  // empty for an alert about an intent or the whole queue); id and time are
  // the store's. Returns the new alert's id; kInvalidArgument if kind is
  // empty.
  virtual Result<int64_t> AddAlert(const AlertRow& alert) = 0;
  // Alerts whose webhook delivery is due: pending, or failing with
  // next_delivery_at <= now; oldest first.
  virtual Result<std::vector<AlertRow>> DueAlertDeliveries(TimePoint now, int limit) = 0;
  // Records a delivery attempt's outcome (kNotFound for an unknown id).
  virtual Status SetAlertDelivery(int64_t id, AlertDelivery delivery, int attempts,
                                  std::string_view detail,
                                  std::optional<TimePoint> next_delivery_at) = 0;

  virtual Result<int64_t> AddDeadLetter(const DeadLetter& letter) = 0;
  virtual Result<std::vector<DeadLetter>> ListDeadLetters(int64_t after_id, int limit) = 0;
  virtual Result<DeadLetter> GetDeadLetter(int64_t id) = 0;
  virtual Status DropDeadLetter(int64_t id) = 0;

  // Deletes, each older than its horizon and at most `policy.batch` of each
  // kind per call (so a call never holds the writer long; call again while
  // PurgeStats::more): settled tasks whole (rows, history, payloads),
  // alerts, dead letters, audit rows, and out-of-order dedup entries (the
  // gap below them is given up). Nothing of an unsettled task is touched; an
  // event of a purged task that arrives late is a duplicate (the node's
  // high-water mark) or an unknown task, never a new row.
  virtual Result<PurgeStats> Purge(const RetentionPolicy& policy) = 0;

  // ---- operator tokens and the audit trail

  // Adds a token. kAlreadyExists for a name in use; with `only_if_first`
  // (bootstrap), kFailedPrecondition when any token exists already.
  virtual Status CreateToken(const TokenRow& token, bool only_if_first) = 0;
  // The token with this hash (revoked and expired ones too: the caller
  // decides); kNotFound if none.
  virtual Result<TokenRow> FindToken(std::string_view hash) = 0;
  virtual Result<std::vector<TokenRow>> ListTokens() = 0;
  // Marks it revoked at `at`; kNotFound for an unknown name.
  virtual Status RevokeToken(std::string_view name, TimePoint at) = 0;
  // Appends an audit row; returns its id (id and time: the store's).
  virtual Result<int64_t> AddAudit(const AuditRow& row) = 0;
  // Oldest first.
  virtual Result<std::vector<AuditRow>> ListAudit(const AuditQuery& query) = 0;

  // ---- several orchestrators (lease.h)

  // Renews the lease claim.replica_id holds at claim.epoch, or takes it
  // (epoch + 1) when it is free or expired at the store's clock, in one
  // transaction that also records the claimant as seen. Returns the lease as
  // it now stands: holder != claim.replica_id means the claim lost.
  virtual Result<LeaseRow> ClaimLease(const LeaseClaim& claim) = 0;
  // Lets the lease go at once (a clean shutdown), if `holder` still holds
  // it at `epoch`; otherwise changes nothing.
  virtual Status ReleaseLease(std::string_view lease, std::string_view holder, int64_t epoch) = 0;
  // Every lease and every replica ever seen (oldest first).
  virtual Result<ClusterView> ReadCluster() = 0;

  virtual StoreStats Stats() const = 0;
};

}  // namespace apollo::store
