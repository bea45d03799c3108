#pragma once

// The center's brain, wired from components that each own their state and
// say so in their header:
//   SessionTable    (session_table.h)    the agents' streams, their snapshots, admission
//   EventIngest     (event_ingest.h)     events into the store, agents acked after commit
//   HeartbeatBuffer (heartbeat_buffer.h) heartbeats between two store writes
//   Leadership      (leadership.h)       whether this replica leads, its fence
// What stays here is the dispatcher and its supervision of runs: the
// dispatch loop — due work dispatched, unacknowledged intents resent, stuck
// runs timed out (asking for progress first), retries granted under the
// retry budget and circuit breakers, rollouts driven, following selectors
// swept — with the small memos it keeps for that (blocked reasons, progress
// asks, the spec cache). Everything durable goes through the StateStore, so
// a restart resumes from the store and nothing depends on memory; with
// several replicas only the leader dispatches, fenced by its epoch.
//
// Thread-safety: every public method is thread-safe. Internally: mu_
// guards the dispatcher's memos; each component guards its own state; the
// store serialises writes.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "bus/event_bus.h"
#include "core/clock.h"
#include "core/retry_policy.h"
#include "core/task_id.h"
#include "orchestrator/admission.h"
#include "orchestrator/agent_session.h"
#include "orchestrator/callback_notifier.h"
#include "orchestrator/concurrency_limit.h"
#include "orchestrator/event_ingest.h"
#include "orchestrator/heartbeat_buffer.h"
#include "orchestrator/leadership.h"
#include "orchestrator/overload.h"
#include "orchestrator/reconciler.h"
#include "orchestrator/rollout_plan.h"
#include "orchestrator/session_table.h"
#include "orchestrator/task_watch.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

struct OrchestratorOptions {
  Duration dispatch_interval = std::chrono::seconds(1);
  Duration ack_timeout = std::chrono::seconds(10);
  Duration heartbeat_interval = std::chrono::seconds(10);
  // The whole fleet's heartbeats per second at most: a larger fleet is told
  // a longer interval (heartbeat_pace.h). 0: no ceiling. 100 keeps an idle
  // fleet of 10,000 under 5 % of a core (BENCHMARKS.md, issue 18); Nomad's
  // max_heartbeats_per_second is 50.
  int64_t max_heartbeats_per_s = 100;
  // Heartbeats are kept in memory and written in one transaction this
  // often (a commit per heartbeat was most of an idle fleet's cost).
  // Liveness (suspect_after, lost_after) is read from the store, so it
  // lags by at most this much.
  Duration heartbeat_flush = std::chrono::seconds(1);
  Duration suspect_after = std::chrono::seconds(30);
  Duration lost_after = std::chrono::seconds(60);
  // Agents send a full snapshot for reconciliation this often (sent in
  // Welcome; 0: each agent's own state_sync_interval).
  Duration state_sync_interval = std::chrono::seconds(300);
  // Schedule-to-start deadline of a task whose spec sets none; 0: wait
  // forever.
  std::chrono::seconds default_start_timeout{600};
  // Named retry policies task files may use (retry_policy: {preset: NAME}).
  RetryPresets retry_presets = BuiltinRetryPresets();
  // At its execution timeout a run on a live node is asked for progress;
  // if it moved since the last query it gets extend_by more (0: the task's
  // own timeout), at most max_extensions times.
  Duration extend_by{0};
  int max_extensions = 1;
  int due_batch = 2000;  // due rows handled per pass
  // Row changes of a pass committed per store transaction; the intents of
  // a chunk leave as soon as it committed.
  int dispatch_chunk = 500;
  // Admission control (admission.h): at most this many new agent sessions
  // accepted per second, and no more handshakes in flight than the window
  // the center's own handshake times allow; the rest are told when to come
  // back, so a center that restarts under a large fleet is not knocked over
  // by the reconnect storm, yet takes it back as fast as it can serve it.
  int max_new_sessions_per_s = 2000;
  std::string orchestrator_id = "orchestrator";
  // Circuit breaker per intent.
  int breaker_failures = 5;
  Duration breaker_cool_down = std::chrono::seconds(30);
  // Token bucket on re-dispatches (retries, ack-timeout resends).
  double retry_rate_per_s = 50;
  double retry_burst = 100;
  // Dispatch queue watermarks.
  int64_t queue_capacity = 10'000;
  double queue_alert_at = 0.8;
  double queue_pause_at = 0.9;
  // WatchTask calls served at once (each holds a server thread).
  int64_t max_watchers = 256;
  // True when alerts.webhook_url is set (alert list then shows delivery).
  bool alert_webhook = false;
  // Where operator-facing alerts go (breaker opened, queue paused, ...),
  // besides a row in the store's alerts.
  std::function<void(const std::string&)> alert;
};

enum class Liveness { kAlive, kSuspect, kLost, kNeverSeen };

// The id of the compensation task of (task_id, node_id): the same every
// time (so creating it twice finds the first), a valid task id.
std::string CompensationTaskId(const std::string& task_id, const std::string& node_id);
std::string_view LivenessName(Liveness l);

class Orchestrator final : public SessionHost {
 public:
  // `store` and `clock` must outlive the Orchestrator.
  Orchestrator(OrchestratorOptions options, store::StateStore& store, const Clock& clock);
  ~Orchestrator() override;

  // Starts the dispatch loop and the ingest completion thread.
  void Start();
  // Stops them; sessions are closed by the gRPC server's shutdown.
  void Stop();

  // Routes agent events through `bus` (started by the caller, outliving this
  // Orchestrator) instead of straight into the store. Call before Start().
  // EventAck still waits for the store commit: the bus reports it.
  void SetEventBus(bus::EventBus* bus) {
    bus_ = bus;
    ingest_.SetEventBus(bus);
  }

  // Several orchestrators (leadership.h): with one set, only the leader
  // accepts agents and dispatches, and its writes for the work it owns are
  // fenced by its epoch; a follower refuses a Hello and names the leader.
  // Without (tests), this orchestrator leads alone. Call before Start().
  void SetLeadership(const Leadership* leadership) { leadership_ = leadership; }
  // Not a follower: leads, or runs alone.
  bool Leads() const { return !leadership_ || leadership_->leader(); }
  const Leadership* leadership() const { return leadership_; }

  // Wakes the dispatch loop now (a submission, a new session, a commit).
  void Kick();

  // Dispatch on create (the submit path, before the create): sets
  // task.dispatch_now to the nodes that may get attempt 1 in the create's
  // own transaction — a ready session, the intent's breaker closed, no
  // dependencies, and nothing the dispatcher is holding back for the node
  // (its last pass blocked a row there, or it could not see all due work),
  // so a fresh task never overtakes a backlog the dispatcher drains in
  // priority order.
  void PlanDispatch(store::NewTask& task) const;

  // Tasks the store has just committed (the submit path): their specs go
  // to the spec cache (specs never change once stored) and their rows to
  // the event bus's directory, so dispatch, ingest and callbacks need no
  // store read for them. Then each task's dispatch_now nodes (rows the
  // create dispatched) are sent attempt 1.
  void TasksStored(std::vector<store::NewTask> tasks);

  // Where settled tasks are reported for their callback_url (may be null).
  void SetCallbackNotifier(CallbackNotifier* notifier) { callbacks_ = notifier; }
  // Skipped without a store read when the cached spec has no callback_url.
  // Forgets the task's per-row memos first (ForgetTask).
  void TaskMayHaveSettled(const std::string& task_id);
  // Drops what the center remembers per (task, node) row of `task_id` —
  // blocked reasons, progress queries — once a row of it ended: memos
  // that only save work, so forgetting early costs at most a rewrite.
  void ForgetTask(const std::string& task_id);

  // Sizes of the per-task and per-node maps (tests prove they shrink).
  struct MemoSizes {
    size_t sessions = 0, snapshots = 0, blocked = 0, progress_asks = 0, specs = 0;
  };
  MemoSizes memo_sizes() const;
  // Admission control of new agent sessions (admission.h), for /metrics.
  AdmissionCounts admission_counts() const { return sessions_.admission(); }

  // Sends Cancel for (task, node) to the node if it is connected.
  void SendCancel(const std::string& task_id, const std::string& node_id, uint32_t attempt,
                  const std::string& reason);

  bool Connected(const std::string& node_id) const;
  // Connected, but its Hello said conservative mode and it is not synced yet.
  bool ConnectedConservative(const std::string& node_id) const;

  // Asks a connected agent for a snapshot now. NotFound if not connected.
  Status RequestSnapshot(const std::string& node_id);

  // An operator's pause / resume / approve / abort of a task's rollout
  // (rollouts.cc); `who` is the caller's token name (or ""). Returns the
  // rollout as it now stands; kFailedPrecondition when the action does not
  // apply to its state, kNotFound for an unknown task.
  Result<store::RolloutRow> ControlRollout(const std::string& task_id, RolloutAction action,
                                           const std::string& who, const std::string& reason);

  // A task with a following selector was stored or stopped following: the
  // next Hello reads the list again (follow.cc).
  void FollowingChanged();

  // Compares the latest snapshot of `node_id` (all nodes when empty) with
  // the store and, unless `dry_run`, repairs the drift.
  struct ReconcileOutcome {
    std::vector<DriftItem> drift;
    int repaired = 0;
    // Alert rows written for tasks the agent runs that the store does not
    // know (each (node, task, attempt) once).
    int alerts = 0;
    std::vector<std::string> nodes_without_snapshot;
    Duration oldest_snapshot_age{0};
  };
  Result<ReconcileOutcome> Reconcile(const std::string& node_id, bool dry_run);

  // Counters since start, for operators and tests.
  int64_t reconcile_repairs() const { return reconcile_repairs_.load(); }
  int64_t reconcile_alerts() const { return reconcile_alerts_.load(); }

  // Overload state, for the operator API.
  std::vector<BreakerInfo> Breakers() const { return breakers_.List(); }
  bool QueuePaused() const { return watermarks_.paused(); }
  int64_t QueueDepth() const { return watermarks_.depth(); }
  int64_t QueueCapacity() const { return watermarks_.capacity(); }
  const TokenBucket& retry_budget() const { return retry_budget_; }
  // Slots for WatchTask calls (options.max_watchers): a watch holds one
  // while it runs, and is refused when none is free.
  ConcurrencyLimit& watchers() { return watchers_; }
  // Where WatchTask calls wait for their task's next commit.
  TaskWatchHub& task_watches() { return task_watches_; }
  Liveness NodeLiveness(const store::NodeInfo& node) const;
  // The heartbeat interval agents are told now (heartbeat_pace.h).
  Duration HeartbeatInterval() const;
  // Tells every session the current interval if it grew enough since they
  // were last told (dispatch thread; tests).
  void PaceHeartbeats(TimePoint now);
  TaskIdGenerator& ids() { return ids_; }
  const OrchestratorOptions& options() const { return options_; }

  // SessionHost
  grpc::Status OnHello(const std::shared_ptr<SessionHandle>& handle, const apollo::v1::Hello& hello,
                       apollo::v1::Welcome* welcome) override;
  void OnEvents(const std::shared_ptr<SessionHandle>& handle, apollo::v1::EventBatch batch,
                std::function<void(uint64_t)> done) override;
  void OnHeartbeat(const std::shared_ptr<SessionHandle>& handle,
                   const apollo::v1::Heartbeat& hb) override;
  void OnSnapshot(const std::shared_ptr<SessionHandle>& handle,
                  const apollo::v1::Snapshot& snapshot) override;
  void OnProgress(const std::shared_ptr<SessionHandle>& handle,
                  const apollo::v1::ProgressReply& reply) override;
  void OnDisconnect(const std::shared_ptr<SessionHandle>& handle) override;
  void OnRefused(const std::string& kind, const std::string& node_id,
                 const std::string& detail) override {
    RaiseAlert(kind, node_id, "", detail);
  }

 private:
  // (EventIngest's on_committed)
  void RecordOutcomes(const std::string& node_id, const std::vector<EventIngest::Sent>& events,
                      const store::ApplyResult& r);
  void UpdateWatermarks();
  // An operator-facing alert: a row in the store's alerts (`kind`, naming
  // the node and task when there is one) and a line on options_.alert.
  void RaiseAlert(const std::string& kind, const std::string& node_id, const std::string& task_id,
                  const std::string& line);
  void Alert(const std::string& line) const {
    if (options_.alert) options_.alert(line);
  }

  void DispatchLoop();
  // One pass over due work; returns how many rows it handled.
  size_t DispatchPass();
  // The node's session if it is connected and synced (ready for intents).
  std::shared_ptr<SessionHandle> SessionFor(const std::string& node_id) const {
    return sessions_.Ready(node_id);
  }
  Result<std::vector<DriftItem>> DriftOf(const NodeSnapshot& snapshot);
  // Writes an alert row for each unknown-to-store item not alerted before;
  // returns how many were written.
  Result<int> AlertUnknownToStore(const std::vector<DriftItem>& drift);
  // The spec of a task, cached (specs never change once stored).
  std::shared_ptr<const TaskSpec> Spec(const std::string& task_id);
  apollo::v1::Intent MakeIntent(const TaskSpec& spec, uint32_t attempt) const;

  // A dispatch pass stages its row changes and commits them in chunks of
  // at most options_.dispatch_chunk: one store Transition call (one
  // transaction, one fsync) per chunk. Only then does each applied row run
  // its follow-up (queue its intent, send a cancel); a row refused by the
  // store (version conflict, illegal) simply does nothing. The queued
  // intents of a chunk then go out, one message per node.
  using Outbox = std::map<std::string, std::vector<apollo::v1::Intent>>;
  struct Staged {
    store::TransitionRequest request;
    std::function<void(Outbox&)> on_applied;  // may be empty
  };
  struct Pass {
    std::vector<Staged> staged;
    Outbox out;
    // The node list, read once per pass and only if a row needs it.
    std::optional<std::vector<store::NodeInfo>> nodes;
    // Rows whose progress answer was handled this pass (their exec timeout,
    // read before, is not acted on again).
    std::set<std::pair<std::string, std::string>> progressed;
    // Each node's ready session (or none) as the pass first saw it. Due
    // rows come high priority first; judging readiness once per pass keeps
    // a node that becomes ready mid-pass (after its reconnect sync) from
    // getting the pass's later, lower-priority rows before the earlier
    // ones the pass already held back: all of them go in the next pass.
    std::map<std::string, std::shared_ptr<SessionHandle>> sessions;
    // Nodes this pass blocked a row of (held_back_ once the pass ends).
    std::set<std::string> held_back;
  };
  std::shared_ptr<SessionHandle> PassSession(Pass& pass, const std::string& node_id) const;
  void Stage(Pass& pass, store::TransitionRequest request,
             std::function<void(Outbox&)> on_applied = {});
  // Commits what is staged, runs the follow-ups, sends the intents.
  void CommitStaged(Pass& pass);
  void SendOutbox(Outbox& out);
  // Why a due row's node cannot take it now.
  std::string NodeAbsentReason(Pass& pass, const std::string& node_id);
  // Records why a row is not moving, once per distinct reason.
  void Block(Pass& pass, const store::DueItem& item, const std::string& reason);

  // Due-work handlers; each stages its row change in `pass`.
  void HandleDispatch(const store::DueItem& item, Pass& pass);
  double RetryReserve(Priority p) const;
  void HandleAckTimeout(const store::DueItem& item, Pass& pass);
  void HandleExecTimeout(const store::DueItem& item, Pass& pass);
  void HandleRetryDecision(const store::DueItem& item, Pass& pass);
  void HandleUpstreamFailed(const store::DueItem& item, Pass& pass);
  void HandleNotStarted(const store::DueItem& item, Pass& pass);
  void HandleCompensate(const store::DueItem& item, Pass& pass);
  // A cancel made through a follower (kDeliverCancel): the agent is told
  // now, or at its sync when it is away.
  void HandleDeliverCancel(const store::DueItem& item, Pass& pass);
  // Progress before a kill: ask (the row waits one ack timeout), then the
  // answers queued by OnProgress extend the run or time it out.
  void AskProgress(const store::DueItem& item, Pass& pass);
  void HandleProgressReplies(Pass& pass);
  // RUNNING -> TIMEOUT with `detail`; a connected agent is told to stop.
  void TimeOut(const store::DueItem& item, Pass& pass, std::string detail);
  // Moves every active rollout one step (rollouts.cc), at most every
  // kRolloutInterval unless kicked; an aborting one's rows are cancelled or
  // rolled back (AbortRows).
  void DriveRollouts(Pass& pass);
  // Stages the cancels of an aborting rollout's rows and creates the
  // rollbacks; false when a rollback could not be created yet.
  bool AbortRows(const store::TaskRow& task, Pass& pass);
  static constexpr Duration kRolloutInterval = std::chrono::milliseconds(250);
  // Gives `node` (just registered) a row of every following task whose
  // selector it matches (follow.cc).
  void FollowNode(const store::NodeInfo& node);
  // Following tasks were stored with these (task, node) rows: remember
  // them, then sweep the registered nodes once (follow.cc).
  void FollowingStored(const std::vector<std::pair<std::string, std::string>>& rows);

  // The compensation task of `failed` on `node_id` (failed.on_failure set).
  store::NewTask CompensationTask(const TaskSpec& failed, const std::string& node_id) const;

  const OrchestratorOptions options_;
  store::StateStore& store_;
  bus::EventBus* bus_ = nullptr;  // optional (SetEventBus); set before Start
  const Clock& clock_;
  TaskIdGenerator ids_;
  CallbackNotifier* callbacks_ = nullptr;  // optional (SetCallbackNotifier); set before Start
  const Leadership* leadership_ = nullptr;  // optional (SetLeadership); set before Start

  SessionTable sessions_;
  HeartbeatBuffer heartbeats_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const TaskSpec>> specs_;  // guarded by mu_
  // Why a (task, node) row is not moving, as last written: erased when it
  // moves on or its task settles.
  std::map<std::pair<std::string, std::string>, std::string> blocked_;      // guarded by mu_
  // What the last dispatch pass held back (PlanDispatch): nodes it blocked
  // a row of, and whether it saw less than all due work (a full pass).
  std::set<std::string> held_back_;  // guarded by mu_
  bool pass_full_ = false;           // guarded by mu_
  // A run asked for progress at its execution timeout, per (task, node).
  struct ProgressAsk {
    uint32_t attempt = 0;
    int64_t version = 0;           // the row's when asked
    int extensions = 0;            // the row's when asked
    bool pending = false;          // asked, not answered yet
    int64_t last_progress_us = 0;  // the agent's "last moved" at the previous extension
  };
  static constexpr size_t kMaxProgressAsks = 100'000;  // a bound, then forgotten
  std::map<std::pair<std::string, std::string>, ProgressAsk> progress_asks_;  // guarded by mu_
  std::vector<std::pair<std::string, apollo::v1::ProgressReply>>
      progress_replies_;                                             // guarded by mu_
  Rng rng_;                                                          // guarded by mu_
  // The fleet for the heartbeat pace: nodes the store knew at Start, the
  // most sessions at once since.
  std::atomic<int64_t> fleet_at_start_{0};
  std::atomic<int64_t> sessions_peak_{0};
  Duration told_pace_ = options_.heartbeat_interval;  // PaceHeartbeats' thread only
  TimePoint told_pace_at_{};  // likewise
  std::atomic<int64_t> reconcile_repairs_{0};
  std::atomic<int64_t> reconcile_alerts_{0};
  // (node, task, attempt) already alerted as unknown to the store, so a
  // snapshot every sync interval does not repeat the alert.
  std::set<std::tuple<std::string, std::string, uint32_t>> alerted_unknown_;  // guarded by mu_
  CircuitBreakers breakers_;
  TokenBucket retry_budget_;
  Watermarks watermarks_;
  ConcurrencyLimit watchers_;
  TaskWatchHub task_watches_;
  TimePoint watermarks_checked_{};  // dispatch thread only
  TimePoint rollouts_driven_{};     // dispatch thread only
  // Following tasks as last read (at most every kFollowingRefresh, or when
  // stale), and the (task, node) pairs settled since start.
  std::mutex follow_mu_;
  std::vector<store::FollowingTask> following_;             // guarded by follow_mu_
  TimePoint following_read_{};                              // guarded by follow_mu_
  bool following_stale_ = true;                             // guarded by follow_mu_
  std::set<std::pair<std::string, std::string>> followed_;  // guarded by follow_mu_
  static constexpr Duration kFollowingRefresh = std::chrono::seconds(1);
  static constexpr size_t kMaxFollowed = 1'000'000;
  std::atomic<bool> rollouts_kicked_{true};
  // Rows of aborting rollouts whose rollback exists (saves a create per
  // pass); guarded by mu_.
  std::set<std::pair<std::string, std::string>> rolled_back_;

  std::mutex loop_mu_;
  std::condition_variable loop_cv_;
  bool kicked_ = false;  // guarded by loop_mu_
  bool stop_ = false;    // guarded by loop_mu_

  // Last: its thread calls back into the members above (RecordOutcomes).
  EventIngest ingest_;
  std::thread dispatch_thread_;
};

}  // namespace apollo::orchestrator
