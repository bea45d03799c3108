#include "orchestrator/orchestrator.h"

#include <random>

#include "apollo/v1/event.pb.h"
#include "bus/ingest.h"
#include "core/event.h"

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
      rng_(std::random_device{}()),
      admission_(AdmissionFor(options_)),
      breakers_(options_.breaker_failures, options_.breaker_cool_down),
      retry_budget_(options_.retry_rate_per_s, options_.retry_burst),
      watermarks_(options_.queue_capacity, options_.queue_alert_at, options_.queue_pause_at),
      watchers_(options_.max_watchers) {}

Orchestrator::~Orchestrator() { Stop(); }

void Orchestrator::Start() {
  ingest_thread_ = std::thread([this] { IngestLoop(); });
  dispatch_thread_ = std::thread([this] { DispatchLoop(); });
}

void Orchestrator::Stop() {
  {
    std::lock_guard<std::mutex> a(loop_mu_);
    std::lock_guard<std::mutex> b(ingest_mu_);
    stop_ = true;
  }
  loop_cv_.notify_all();
  ingest_cv_.notify_all();
  if (dispatch_thread_.joinable()) dispatch_thread_.join();
  if (ingest_thread_.joinable()) ingest_thread_.join();
  FlushHeartbeats(/*force=*/true);
}

void Orchestrator::Kick() {
  {
    std::lock_guard<std::mutex> lock(loop_mu_);
    kicked_ = true;
  }
  loop_cv_.notify_one();
}

std::shared_ptr<SessionHandle> Orchestrator::AnySession(const std::string& node_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(node_id);
  if (it == sessions_.end() || !it->second->connected()) return nullptr;
  return it->second;
}

std::shared_ptr<SessionHandle> Orchestrator::SessionFor(const std::string& node_id) const {
  auto s = AnySession(node_id);
  return s && s->ready() ? s : nullptr;
}

bool Orchestrator::Connected(const std::string& node_id) const {
  return AnySession(node_id) != nullptr;
}

bool Orchestrator::ConnectedConservative(const std::string& node_id) const {
  auto s = AnySession(node_id);
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

bool Orchestrator::Admit(const SessionHandle* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<uint64_t> ticket = admission_.TryAdmit(clock_.Now());
  if (!ticket) return false;
  // Until reconciled (OnSnapshot) or gone (OnDisconnect, which also follows
  // a Hello that fails after this).
  admitting_[handle] = Handshake{*ticket, Duration(0)};
  return true;
}

void Orchestrator::AddHandshakeTime(const SessionHandle* handle, Duration center_time) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = admitting_.find(handle);
  if (it != admitting_.end()) it->second.center_time += center_time;
}

void Orchestrator::EndHandshake(const SessionHandle* handle, bool reconciled) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = admitting_.find(handle);
  if (it == admitting_.end()) return;
  if (reconciled) {
    admission_.Reconciled(it->second.ticket, it->second.center_time, clock_.Now());
  } else {
    admission_.Abandoned(it->second.ticket);
  }
  admitting_.erase(it);
}

Status Orchestrator::RequestSnapshot(const std::string& node_id) {
  auto session = AnySession(node_id);
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!node_id.empty()) {
      auto it = snapshots_.find(node_id);
      if (it == snapshots_.end()) {
        out.nodes_without_snapshot.push_back(node_id);
      } else {
        snapshots.push_back(it->second);
      }
    } else {
      for (const auto& [id, snap] : snapshots_) snapshots.push_back(snap);
    }
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

Liveness Orchestrator::NodeLiveness(const store::NodeInfo& node) const {
  if (!node.registered || !node.last_heartbeat) return Liveness::kNeverSeen;
  Duration silent = clock_.Now() - *node.last_heartbeat;
  if (silent < options_.suspect_after) return Liveness::kAlive;
  if (silent < options_.lost_after) return Liveness::kSuspect;
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
  if (!Admit(handle.get())) {
    // The details carry the retry-after in milliseconds for the agent.
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "too many new sessions at once; come back later", "1000");
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
  {
    // An older heartbeat still in memory must not move it back.
    std::lock_guard<std::mutex> lock(heartbeat_mu_);
    heartbeats_.erase(node.node_id);
  }
  if (Status s = store_.UpsertNode(node); !s.ok()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "cannot register node: " + s.message());
  }
  FollowNode(node);
  auto stored = store_.HighestStoredSeq(node.node_id);
  if (!stored.ok()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "store: " + stored.status().message());
  }
  welcome->set_stored_seq(*stored);
  welcome->set_heartbeat_interval_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.heartbeat_interval).count());
  welcome->set_orchestrator_id(options_.orchestrator_id);
  welcome->set_state_sync_interval_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.state_sync_interval).count());
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_[node.node_id] = handle;  // a reconnect replaces the old stream
  }
  AddHandshakeTime(handle.get(), clock_.Now() - hello_started);
  Kick();
  return grpc::Status::OK;
}

void Orchestrator::OnEvents(const std::shared_ptr<SessionHandle>& handle,
                            apollo::v1::EventBatch batch, std::function<void(uint64_t)> done) {
  std::vector<Event> events;
  events.reserve(batch.events_size());
  for (const auto& pb : batch.events()) {
    auto e = EventFromProto(pb);
    if (!e.ok()) {
      // Keep it so the store records it as malformed (an alert), but never
      // let one agent write another node's events.
      Event raw;
      raw.task_id = pb.task_id();
      raw.node_id = handle->node_id();
      raw.sequence_number = pb.sequence_number();
      raw.attempt = pb.attempt();
      raw.type = static_cast<EventType>(pb.event_type());
      raw.payload = pb.payload();
      events.push_back(std::move(raw));
      continue;
    }
    if (e->node_id != handle->node_id()) continue;
    events.push_back(std::move(*e));
  }
  PendingApply p;
  p.node_id = handle->node_id();
  p.handle = handle;
  for (const Event& e : events) {
    bool interrupted = e.type == EventType::kFailed &&
                       e.payload.find("\"interrupted by agent restart\"") != std::string::npos;
    p.events.push_back({e.task_id, e.type, interrupted});
  }
  p.done = std::move(done);
  p.result = bus_ ? bus::PublishForIngest(*bus_, p.node_id, std::move(events))
                 : store_.ApplyAsync(std::move(events));
  {
    std::lock_guard<std::mutex> lock(ingest_mu_);
    ingest_.push_back(std::move(p));
  }
  ingest_cv_.notify_one();
}

// Completes applies in submission order (the store commits in that order)
// and acknowledges each agent only after its events are committed.
void Orchestrator::IngestLoop() {
  for (;;) {
    PendingApply p;
    {
      std::unique_lock<std::mutex> lock(ingest_mu_);
      ingest_cv_.wait(lock, [this] { return stop_ || !ingest_.empty(); });
      if (ingest_.empty()) return;
      p = std::move(ingest_.front());
      ingest_.pop_front();
    }
    Result<store::ApplyResult> r = p.result.get();
    uint64_t acked = 0;
    if (r.ok()) {
      auto it = r->acked_seq.find(p.node_id);
      if (it != r->acked_seq.end()) acked = it->second;
    }
    // On a store / bus error nothing is acknowledged: the agent keeps the
    // events in its WAL. It resends them only on a new session, so end this
    // one (e.g. JetStream lost the stream, or a publish timed out).
    if (!r.ok() && p.handle) {
      p.handle->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                   "events not committed (" + r.status().message() +
                                       "): reconnect and resend"));
    }
    p.done(acked);
    if (r.ok()) {
      RecordOutcomes(p, *r);
      Kick();
    }
  }
}

void Orchestrator::RecordOutcomes(const PendingApply& p, const store::ApplyResult& r) {
  for (size_t i = 0; i < p.events.size() && i < r.outcomes.size(); ++i) {
    const auto& [task_id, type, interrupted] = p.events[i];
    if (r.outcomes[i].outcome != store::Outcome::kApplied) continue;
    task_watches_.Notify(task_id);
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
      RaiseAlert("circuit_open", p.node_id, task_id,
                 "circuit breaker OPEN for intent '" + spec->intent + "' after " +
                     std::to_string(options_.breaker_failures) +
                     " consecutive failures (the last: task " + task_id + " on " + p.node_id +
                     "): its dispatch pauses; one task is let through after " +
                     std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                        options_.breaker_cool_down).count()) +
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
  std::lock_guard<std::mutex> lock(heartbeat_mu_);
  heartbeats_[handle->node_id()] = store::NodeHeartbeat{handle->node_id(), clock_.Now(), mode};
}

void Orchestrator::FlushHeartbeats(bool force) {
  TimePoint now = clock_.Now();
  if (!force && now - heartbeats_flushed_ < options_.heartbeat_flush) return;
  heartbeats_flushed_ = now;
  std::vector<store::NodeHeartbeat> beats;
  {
    std::lock_guard<std::mutex> lock(heartbeat_mu_);
    if (heartbeats_.empty()) return;
    beats.reserve(heartbeats_.size());
    for (auto& [id, hb] : heartbeats_) beats.push_back(std::move(hb));
    heartbeats_.clear();
  }
  if (!store_.RecordHeartbeats(beats).ok()) {
    // Store unavailable: keep them for the next flush unless newer ones came.
    std::lock_guard<std::mutex> lock(heartbeat_mu_);
    for (auto& hb : beats) heartbeats_.try_emplace(hb.node_id, std::move(hb));
  }
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    snapshots_[snap.node_id] = snap;
  }
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
  AddHandshakeTime(handle.get(), clock_.Now() - started);
  EndHandshake(handle.get(), /*reconciled=*/true);
  Kick();
}

void Orchestrator::OnDisconnect(const std::shared_ptr<SessionHandle>& handle) {
  EndHandshake(handle.get(), /*reconciled=*/false);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(handle->node_id());
  if (it == sessions_.end() || it->second != handle) return;  // replaced by a newer session
  sessions_.erase(it);
  // Its snapshot says what the agent ran while connected: stale from now
  // on (reconciling against it could undo what happens meanwhile), and a
  // map keyed by what peers say must not outlive them. The next session
  // sends a fresh one.
  snapshots_.erase(handle->node_id());
}

Orchestrator::MemoSizes Orchestrator::memo_sizes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return MemoSizes{sessions_.size(), snapshots_.size(), blocked_.size(), progress_asks_.size(),
                   specs_.size()};
}

void Orchestrator::SendCancel(const std::string& task_id, const std::string& node_id,
                              uint32_t attempt, const std::string& reason) {
  auto session = SessionFor(node_id);
  if (!session) return;  // re-sent from OnSnapshot when the node is back
  session->Send(CancelMessage(task_id, attempt, reason));
}

}  // namespace apollo::orchestrator
