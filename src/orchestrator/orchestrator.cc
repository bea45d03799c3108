#include "orchestrator/orchestrator.h"

#include <random>

#include "apollo/v1/event.pb.h"
#include "bus/ingest.h"
#include "core/event.h"
#include "orchestrator/heartbeat_pace.h"

namespace apollo::orchestrator {

using apollo::v1::CenterMessage;

namespace {

CenterMessage CancelMessage(const std::string& task_id, uint32_t attempt,
                            const std::string& reason) {
  CenterMessage msg;
  msg.mutable_cancel()->set_task_id(task_id);
  msg.mutable_cancel()->set_attempt(attempt);
  msg.mutable_cancel()->set_reason(reason);
  return msg;
}

AdmissionOptions AdmissionFor(const OrchestratorOptions& o) {
  AdmissionOptions a;
  a.max_per_s = o.max_new_sessions_per_s;
  return a;
}

}  // namespace

std::string_view LivenessName(Liveness l) {
  switch (l) {
    case Liveness::kAlive: return "ALIVE";
    case Liveness::kSuspect: return "SUSPECT";
    case Liveness::kLost: return "LOST";
    case Liveness::kNeverSeen: return "NEVER_SEEN";
  }
  return "UNKNOWN";
}

Orchestrator::Orchestrator(OrchestratorOptions options, store::StateStore& store,
                           const Clock& clock)
    : options_(std::move(options)),
      store_(store),
      clock_(clock),
      ids_(clock),
      sessions_(AdmissionFor(options_)),
      heartbeats_(options_.heartbeat_flush),
      rng_(std::random_device{}()),
      breakers_(options_.breaker_failures, options_.breaker_cool_down),
      retry_budget_(options_.retry_rate_per_s, options_.retry_burst),
      watermarks_(options_.queue_capacity, options_.queue_alert_at, options_.queue_pause_at),
      watchers_(options_.max_watchers),
      ingest_(store_,
              [this](const std::string& node_id, const std::vector<EventIngest::Sent>& events,
                     const store::ApplyResult& r) {
                RecordOutcomes(node_id, events, r);
                Kick();
              }) {}

Orchestrator::~Orchestrator() { Stop(); }

void Orchestrator::Start() {
  // The fleet this center serves, for the heartbeat pace (heartbeat_pace.h).
  if (auto nodes = store_.ListNodes(); nodes.ok()) {
    fleet_at_start_.store(static_cast<int64_t>(nodes->size()));
  }
  // Watchers are told each commit of agent events with what it changed
  // (task_watch.h), straight from the store's writer.
  store_.SetCommitListener([this](std::span<const store::TaskChange> changes) {
    for (const store::TaskChange& c : changes) task_watches_.Publish(c);
  });
  ingest_.Start();
  dispatch_thread_ = std::thread([this] { DispatchLoop(); });
}

void Orchestrator::Stop() {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    stop_ = true;
  }
  loop_cv_.notify_all();
  if (dispatch_thread_.joinable()) dispatch_thread_.join();
  ingest_.Stop();
  store_.SetCommitListener(nullptr);
  heartbeats_.Flush(store_, clock_.Now(), /*force=*/true);
}

void Orchestrator::Kick() {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    kicked_ = true;
  }
  loop_cv_.notify_one();
}

bool Orchestrator::Connected(const std::string& node_id) const {
  return sessions_.Connected(node_id) != nullptr;
}

bool Orchestrator::ConnectedConservative(const std::string& node_id) const {
  auto s = sessions_.Connected(node_id);
  return s && !s->ready() && s->conservative();
}

void Orchestrator::RaiseAlert(const std::string& kind, const std::string& node_id,
                              const std::string& task_id, const std::string& line) {
  store::AlertRow a;
  a.kind = kind;
  a.node_id = node_id;
  a.task_id = task_id;
  a.detail = line;
  auto id = store_.AddAlert(a);
  if (options_.alert) {
    options_.alert(id.ok() ? line
                           : line + " (not recorded in the store: " + id.status().message() + ")");
  }
}

Status Orchestrator::RequestSnapshot(const std::string& node_id) {
  auto session = sessions_.Connected(node_id);
  if (!session) return Status::NotFound("node '" + node_id + "' is not connected");
  CenterMessage msg;
  msg.mutable_snapshot_request();
  session->Send(std::move(msg));
  return Status::Ok();
}

Result<std::vector<DriftItem>> Orchestrator::DriftOf(const NodeSnapshot& snapshot) {
  auto rows = store_.ListNodeTasks(snapshot.node_id, 1'000'000);
  if (!rows.ok()) return rows.status();
  auto hwm = store_.HighestStoredSeq(snapshot.node_id);
  if (!hwm.ok()) return hwm.status();
  return FindDrift(snapshot, *rows, *hwm);
}

Result<Orchestrator::ReconcileOutcome> Orchestrator::Reconcile(const std::string& node_id,
                                                               bool dry_run) {
  LeaderScope fenced(leadership_);  // repairs are the leader's work
  std::vector<NodeSnapshot> snapshots;
  ReconcileOutcome out;
  if (node_id.empty()) {
    snapshots = sessions_.Snapshots();
  } else if (std::optional<NodeSnapshot> snap = sessions_.Snapshot(node_id)) {
    snapshots.push_back(std::move(*snap));
  } else {
    out.nodes_without_snapshot.push_back(node_id);
  }
  for (const NodeSnapshot& snap : snapshots) {
    out.oldest_snapshot_age = std::max(out.oldest_snapshot_age, clock_.Now() - snap.received_at);
    auto drift = DriftOf(snap);
    if (!drift.ok()) return drift.status();
    if (!dry_run) {
      auto changed = ApplyDrift(store_, *drift, clock_);
      if (!changed.ok()) return changed.status();
      out.repaired += *changed;
      reconcile_repairs_.fetch_add(*changed);
      auto alerts = AlertUnknownToStore(*drift);
      if (!alerts.ok()) return alerts.status();
      out.alerts += *alerts;
    }
    out.drift.insert(out.drift.end(), drift->begin(), drift->end());
  }
  if (out.repaired > 0) Kick();
  return out;
}

Result<int> Orchestrator::AlertUnknownToStore(const std::vector<DriftItem>& drift) {
  // Nothing to repair, but an operator must know; once per (node, task,
  // attempt), not at every snapshot.
  std::vector<DriftItem> fresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (alerted_unknown_.size() > 100'000) alerted_unknown_.clear();  // a bound
    for (const DriftItem& d : drift) {
      if (d.action != DriftAction::kUnknownToStore) continue;
      if (alerted_unknown_.emplace(d.node_id, d.task_id, d.attempt).second) fresh.push_back(d);
    }
  }
  auto written = RaiseDriftAlerts(store_, fresh);
  if (!written.ok()) {
    // Not recorded: forget them so the next snapshot tries again.
    std::lock_guard<std::mutex> lock(mu_);
    for (const DriftItem& d : fresh) alerted_unknown_.erase({d.node_id, d.task_id, d.attempt});
    return written.status();
  }
  reconcile_alerts_.fetch_add(*written);
  for (const DriftItem& d : fresh) {
    if (options_.alert) {
      options_.alert("node " + d.node_id + " runs task " + d.task_id +
                     " that the store does not know (unknown_to_store): " + d.detail);
    }
  }
  return *written;
}

Duration Orchestrator::HeartbeatInterval() const {
  return HeartbeatPace(options_.heartbeat_interval,
                       std::max(fleet_at_start_.load(), sessions_peak_.load()),
                       options_.max_heartbeats_per_s);
}

void Orchestrator::PaceHeartbeats(TimePoint now) {
  // Sessions told a shorter interval when the fleet was smaller (agents that
  // came first after a start) are told the new one when it grew by a fifth,
  // at most every 10 s: a few rounds while a fleet comes back, not one per
  // agent that connects.
  const Duration pace = HeartbeatInterval();
  if (pace * 5 < told_pace_ * 6 || now - told_pace_at_ < std::chrono::seconds(10)) return;
  told_pace_ = pace;
  told_pace_at_ = now;
  CenterMessage m;
  m.mutable_heartbeat_pace()->set_heartbeat_interval_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(pace).count());
  for (const auto& handle : sessions_.All()) handle->Send(m);
}

Liveness Orchestrator::NodeLiveness(const store::NodeInfo& node) const {
  if (!node.registered || !node.last_heartbeat) return Liveness::kNeverSeen;
  Duration silent = clock_.Now() - *node.last_heartbeat;
  // Stretched as the heartbeats are for a large fleet (heartbeat_pace.h).
  const double factor =
      static_cast<double>(HeartbeatInterval().count()) /
      static_cast<double>(std::max<int64_t>(1, options_.heartbeat_interval.count()));
  auto stretch = [factor](Duration d) {
    return Duration(static_cast<int64_t>(static_cast<double>(d.count()) * factor));
  };
  if (silent < stretch(options_.suspect_after)) return Liveness::kAlive;
  if (silent < stretch(options_.lost_after)) return Liveness::kSuspect;
  return Liveness::kLost;
}

// ---------------------------------------------------------------- sessions

grpc::Status Orchestrator::OnHello(const std::shared_ptr<SessionHandle>& handle,
                                   const apollo::v1::Hello& hello, apollo::v1::Welcome* welcome) {
  if (hello.node_id().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Hello without node_id");
  }
  if (!Leads()) {
    // The details name the leader's address for the agent (agents go to the
    // leader: it owns their sessions, their events and their dispatch).
    const std::string id = leadership_->leader_id();
    const std::string address = leadership_->leader_address();
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "replica " + leadership_->replica_id() + " is not the leader; " +
                            (id.empty() ? "no leader is known yet, try again shortly"
                                        : "the leader is " + id + " at " + address),
                        address);
  }
  // Registering the node and its following rows is the leader's work.
  LeaderScope fenced(leadership_);
  const TimePoint hello_started = clock_.Now();
  if (Duration after{0}; !sessions_.Admit(handle.get(), hello_started, &after)) {
    // The details carry the retry-after in milliseconds for the agent.
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED, "too many new sessions at once; come back later",
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(after).count()));
  }
  store::NodeInfo node;
  node.node_id = hello.node_id();
  node.labels.insert(hello.labels().begin(), hello.labels().end());
  node.groups.assign(hello.groups().begin(), hello.groups().end());
  node.intents.assign(hello.intents().begin(), hello.intents().end());
  node.disabled_intents.assign(hello.disabled_intents().begin(), hello.disabled_intents().end());
  node.mode = hello.mode() == apollo::v1::AGENT_MODE_CONSERVATIVE ? "conservative" : "normal";
  node.agent_version = hello.agent_version();
  node.last_heartbeat = clock_.Now();
  node.registered = true;
  handle->SetConservative(node.mode == "conservative");
  heartbeats_.Forget(node.node_id);  // an older one must not move it back
  if (Status s = store_.UpsertNode(node); !s.ok()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "cannot register node: " + s.message());
  }
  FollowNode(node);
  auto stored = store_.HighestStoredSeq(node.node_id);
  if (!stored.ok()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "store: " + stored.status().message());
  }
  welcome->set_stored_seq(*stored);
  // Counted before the session is added: this one is part of the fleet.
  for (int64_t n = static_cast<int64_t>(sessions_.sessions()) + 1, peak = sessions_peak_.load();
       n > peak && !sessions_peak_.compare_exchange_weak(peak, n);) {
  }
  welcome->set_heartbeat_interval_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(HeartbeatInterval()).count());
  welcome->set_orchestrator_id(options_.orchestrator_id);
  welcome->set_state_sync_interval_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.state_sync_interval).count());
  sessions_.Add(handle);  // a reconnect replaces the old stream
  sessions_.AddHandshakeTime(handle.get(), clock_.Now() - hello_started);
  Kick();
  return grpc::Status::OK;
}

void Orchestrator::OnEvents(const std::shared_ptr<SessionHandle>& handle,
                            apollo::v1::EventBatch batch, std::function<void(uint64_t)> done) {
  ingest_.Submit(handle, std::move(batch), std::move(done));
}

void Orchestrator::RecordOutcomes(const std::string& node_id,
                                  const std::vector<EventIngest::Sent>& events,
                                  const store::ApplyResult& r) {
  for (size_t i = 0; i < events.size() && i < r.outcomes.size(); ++i) {
    const auto& [task_id, type, interrupted] = events[i];
    if (r.outcomes[i].outcome != store::Outcome::kApplied) continue;
    // Watchers heard of it at the commit (Start: the commit listener).
    if (type == EventType::kCancelled) TaskMayHaveSettled(task_id);
    if (type != EventType::kSucceeded && type != EventType::kFailed &&
        type != EventType::kTimeout) {
      continue;
    }
    TaskMayHaveSettled(task_id);
    if (interrupted) continue;
    auto spec = Spec(task_id);
    if (!spec) continue;
    if (breakers_.Record(spec->intent, type == EventType::kSucceeded, clock_.Now())) {
      RaiseAlert("circuit_open", node_id, task_id,
                 "circuit breaker OPEN for intent '" + spec->intent + "' after " +
                     std::to_string(options_.breaker_failures) +
                     " consecutive failures (the last: task " + task_id + " on " + node_id +
                     "): its dispatch pauses; one task is let through after " +
                     std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                        options_.breaker_cool_down)
                                        .count()) +
                     " s");
    }
  }
}

void Orchestrator::UpdateWatermarks() {
  TimePoint now = clock_.Now();
  if (now - watermarks_checked_ < std::chrono::seconds(1)) return;
  watermarks_checked_ = now;
  auto depth = store_.QueueDepth();
  if (!depth.ok()) return;
  std::string where = std::to_string(*depth) + " of " + std::to_string(watermarks_.capacity());
  const bool was_alerting = watermarks_.alerting();
  switch (watermarks_.Update(*depth)) {
    case Watermarks::Change::kAlert:
      RaiseAlert("queue_alert", "", "", "dispatch queue above its alert mark: " + where);
      break;
    case Watermarks::Change::kPaused:
      // Straight past both marks between two checks: the alert mark was
      // crossed too, and an operator reading the alerts should see it.
      if (!was_alerting) {
        RaiseAlert("queue_alert", "", "", "dispatch queue above its alert mark: " + where);
      }
      RaiseAlert("queue_paused", "", "",
                 "dispatch queue above its pause mark (" + where +
                     "): new submissions are refused until it drains below the alert mark");
      break;
    case Watermarks::Change::kResumed:
      RaiseAlert("queue_resumed", "", "",
                 "dispatch queue back below its alert mark (" + where + "): submissions resume");
      break;
    case Watermarks::Change::kCleared:
      RaiseAlert("queue_cleared", "", "",
                 "dispatch queue back below its alert mark (" + where + ")");
      break;
    case Watermarks::Change::kNone: break;
  }
}

void Orchestrator::OnHeartbeat(const std::shared_ptr<SessionHandle>& handle,
                               const apollo::v1::Heartbeat& hb) {
  std::string mode = hb.mode() == apollo::v1::AGENT_MODE_CONSERVATIVE ? "conservative" : "normal";
  heartbeats_.Record(store::NodeHeartbeat{handle->node_id(), clock_.Now(), mode});
}

void Orchestrator::OnSnapshot(const std::shared_ptr<SessionHandle>& handle,
                              const apollo::v1::Snapshot& pb) {
  LeaderScope fenced(leadership_);  // repairs are the leader's work
  const TimePoint started = clock_.Now();
  NodeSnapshot snap;
  snap.node_id = handle->node_id();
  snap.durable_seq = pb.durable_seq();
  snap.complete = pb.complete();
  snap.received_at = clock_.Now();
  for (const auto& t : pb.tasks()) {
    auto status = ParseTaskState(t.status());
    if (!status) continue;
    snap.tasks.push_back(AgentTaskView{t.task_id(), t.attempt(), *status, t.last_seq()});
  }
  sessions_.SetSnapshot(snap);
  // Every event the agent sent before the snapshot is committed by now (the
  // session reads the next message only after a batch's commit), so the
  // comparison sees what the agent saw.
  int repaired = 0;
  auto r = Reconcile(snap.node_id, /*dry_run=*/false);
  if (r.ok()) {
    repaired = r->repaired;
    // A cancel made while this node was away was never delivered (SendCancel
    // needs a session): the store says CANCELLED, the agent still runs it.
    for (const DriftItem& d : r->drift) {
      if (d.store_state == TaskState::kCancelled && d.agent_state == TaskState::kRunning) {
        handle->Send(CancelMessage(d.task_id, d.attempt, "cancelled while this node was away"));
      }
    }
  }
  CenterMessage ack;
  ack.mutable_snapshot_ack()->set_durable_seq(pb.durable_seq());
  ack.mutable_snapshot_ack()->set_repairs(static_cast<uint32_t>(repaired));
  handle->Send(std::move(ack));
  handle->MarkReady();  // from now on it is handed new work
  // The session's first snapshot ends its handshake (admission.h).
  sessions_.AddHandshakeTime(handle.get(), clock_.Now() - started);
  sessions_.EndHandshake(handle.get(), /*reconciled=*/true, clock_.Now());
  Kick();
}

void Orchestrator::OnDisconnect(const std::shared_ptr<SessionHandle>& handle) {
  sessions_.EndHandshake(handle.get(), /*reconciled=*/false, clock_.Now());
  sessions_.Remove(handle);  // and its snapshot: stale from now on
}

Orchestrator::MemoSizes Orchestrator::memo_sizes() const {
  const size_t sessions = sessions_.sessions(), snapshots = sessions_.snapshots();
  std::lock_guard<std::mutex> lock(mu_);
  return MemoSizes{sessions, snapshots, blocked_.size(), progress_asks_.size(), specs_.size()};
}

void Orchestrator::SendCancel(const std::string& task_id, const std::string& node_id,
                              uint32_t attempt, const std::string& reason) {
  auto session = SessionFor(node_id);
  if (!session) return;  // re-sent from OnSnapshot when the node is back
  session->Send(CancelMessage(task_id, attempt, reason));
}

}  // namespace apollo::orchestrator
