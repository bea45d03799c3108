#include "agent/session.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "agent/address_ring.h"
#include "apollo/v1/event.pb.h"
#include "core/version.h"
#include "core/wire_limits.h"

namespace apollo::agent {

using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;

namespace {

IntentRequest FromProto(const apollo::v1::Intent& i) {
  IntentRequest r;
  r.task_id = i.task_id();
  r.attempt = i.attempt();
  r.intent = i.intent();
  auto params = nlohmann::json::parse(i.params_json(), nullptr, false);
  r.params = params.is_object() ? params : nlohmann::json::object();
  r.metadata.insert(i.metadata().begin(), i.metadata().end());
  // The center may extend a run that still progresses past timeout_s; it
  // cancels the run itself when it does not. The agent's own deadline is
  // the backstop it names (older centers: timeout_s).
  r.timeout = std::chrono::seconds(std::max(i.timeout_s(), i.stop_after_s()));
  switch (i.priority()) {
    case apollo::v1::PRIORITY_HIGH: r.priority = Priority::kHigh; break;
    case apollo::v1::PRIORITY_LOW: r.priority = Priority::kLow; break;
    default: r.priority = Priority::kNormal; break;
  }
  return r;
}

// A follower's refusal of the Hello: UNAVAILABLE, "replica X is not the
// leader; ...", the leader's host:port in the status details ("" while no
// leader is known). Any other failure: nullopt.
std::optional<std::string> NotLeaderRefusal(const grpc::Status& st) {
  if (st.error_code() != grpc::StatusCode::UNAVAILABLE ||
      st.error_message().find("is not the leader") == std::string::npos) {
    return std::nullopt;
  }
  return st.error_details();
}

// After a replica failed, the next is dialled this soon (plus up to
// kQuickRetryJitter), not after the backoff: another one may lead.
constexpr Duration kQuickRetry = std::chrono::milliseconds(200);
constexpr Duration kQuickRetryJitter = std::chrono::milliseconds(300);
// How long one TCP (and TLS) connection attempt may take before gRPC gives
// it up (gRPC's own default). Under a reconnect storm a connection waits in
// the center's accept queue, or its SYN is dropped and sent again by TCP
// after 1, 3, 7 s: giving up sooner wastes the place it had, and an attempt
// given up after the center accepted it still holds a descriptor there
// until the center gets to it, while the agent dials again (measured at
// 10,000 agents: with 5 s the center ran out of descriptors, BENCHMARKS.md).
constexpr Duration kConnectAttemptTimeout = std::chrono::seconds(20);

}  // namespace

Session::Session(SessionOptions options, wal::Wal& wal, const Clock& clock)
    : options_(std::move(options)), wal_(wal), clock_(clock) {}

Session::~Session() { Stop(); }

void Session::Start() {
  last_contact_us_.store(ToUnixMicros(clock_.Now()));
  thread_ = std::thread([this] { Loop(); });
  if (options_.monitor == nullptr) own_monitor_ = std::make_unique<SessionMonitor>();
  monitor_ = options_.monitor != nullptr ? options_.monitor : own_monitor_.get();
  monitor_->Add(this);
}

void Session::CheckCutOff() {
  if (connected_.load()) {
    last_contact_us_.store(ToUnixMicros(clock_.Now()));
    return;
  }
  Duration cut_off = clock_.Now() - FromUnixMicros(last_contact_us_.load());
  if (executor_ && !executor_->conservative() && cut_off > options_.autonomy_window) {
    executor_->SetConservative(true);
    Log("cut off from the center for " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(cut_off).count()) +
        " s (autonomy window " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::milliseconds>(options_.autonomy_window)
                .count()) +
        " ms): conservative mode; finishing running tasks, starting nothing new");
  }
}

void Session::MaybeSynced() {
  if (!connected_.load() || !snapshot_acked_.load()) return;
  if (wal_.acked_seq() < backlog_target_.load()) return;
  if (synced_.exchange(true)) return;
  if (executor_ && executor_->conservative()) {
    executor_->SetConservative(false);
    Log("the center acknowledged the backlog and the snapshot: leaving conservative mode");
  }
}

bool Session::SnapshotReady() const {
  return snapshot_due_.load() && ToUnixMicros(clock_.Now()) >= snapshot_not_before_us_.load();
}

AgentMessage Session::BuildSnapshot() const {
  AgentMessage m;
  auto* snap = m.mutable_snapshot();
  snap->set_durable_seq(wal_.last_seq());
  snap->set_complete(true);
  if (executor_) {
    for (const LocalTask& t : executor_->Snapshot()) {
      auto* e = snap->add_tasks();
      e->set_task_id(t.task_id);
      e->set_attempt(t.attempt);
      e->set_status(std::string(TaskStateName(t.state)));
      e->set_last_seq(t.last_seq);
    }
  }
  return m;
}

void Session::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    writer_stop_ = true;
    if (context_) context_->TryCancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (monitor_ != nullptr) monitor_->Remove(this);
  monitor_ = nullptr;
  own_monitor_.reset();
}

bool Session::SleepFor(Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [this] { return stop_; });
  return !stop_;
}

void Session::OnDurableEvent(const Event& event) { OnDurableEvents({event}); }

void Session::OnDurableEvents(const std::vector<Event>& events) {
  if (events.empty() || !connected_.load()) return;  // resent from the WAL on reconnect
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The writer needs waking only when what it waits for changes: the
    // first pending event (it then sleeps until that one's hold ends at
    // most), or the first that is more than an ACCEPTED (it sends at once).
    // A wake for every event was a futex call, often a context switch, for
    // nothing.
    if (pending_events_.empty()) {
      held_since_ = std::chrono::steady_clock::now();
      wake = true;
    }
    for (const Event& e : events) {
      if (e.type != EventType::kAccepted && !events_urgent_) {
        events_urgent_ = true;
        wake = true;
      }
      pending_events_.push_back(e);
    }
  }
  if (wake) cv_.notify_all();
}

void Session::Enqueue(AgentMessage msg) {
  std::lock_guard<std::mutex> lock(mu_);
  out_.push_back(std::move(msg));
  cv_.notify_all();
}

void Session::Loop() {
  std::mt19937_64 rng(std::random_device{}());
  Duration backoff = options_.initial_backoff;
  // The channel's own reconnect backoff (gRPC default: up to 120 s) would
  // stack on top of ours: the configured max_backoff is the ceiling for both.
  grpc::ChannelArguments args;
  auto ms = [](Duration d) {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  };
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::max(1, ms(options_.initial_backoff)));
  // In gRPC this is how long one connection attempt may take, not a wait
  // between attempts: at the initial backoff (500 ms) a center busy taking
  // a fleet back saw slow attempts abandoned and made again.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
              std::max(ms(options_.initial_backoff), ms(kConnectAttemptTimeout)));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, std::max(1, ms(options_.max_backoff)));
  // A cut-off link (packets dropped, nothing closed) stalls the stream
  // silently, and TCP gives up only after ~15 minutes. Keepalive on makes
  // gRPC set TCP_USER_TIMEOUT to the keepalive timeout (one heartbeat
  // interval): the heartbeat this agent sends then fails the socket when it
  // is not acknowledged in time, so the session notices a cut within about
  // two intervals and reconnects. A center that hangs (stopped, deadlocked)
  // still has its kernel acknowledge everything: only a ping it must answer
  // shows it, sent every three heartbeat intervals (a replica then takes
  // the agents over within four), not every one: a ping per agent per
  // interval was a read and a write in the center for each agent of a quiet
  // fleet. (The center allows pings this often, orchestrator/main.cc.)
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, std::max(1000, 3 * ms(options_.heartbeat_interval)));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, std::max(1000, ms(options_.heartbeat_interval)));
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // gRPC's BDP probe answers received data with a ping of its own (and a
  // timer for the next) to size flow-control windows for bulk transfers.
  // Our messages are small; the probe only doubled the packets per message
  // (BENCHMARKS.md, issue 18). The windows stay at gRPC's 64 KiB default.
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // Larger than anything the center sends (it batches intents by bytes
  // under the same constants: core/wire_limits.h).
  args.SetMaxReceiveMessageSize(static_cast<int>(kAgentMaxReceiveBytes));
  if (options_.own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (options_.tls) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = options_.tls->ca_pem;
    tls.pem_cert_chain = options_.tls->cert_pem;
    tls.pem_private_key = options_.tls->key_pem;
    creds = grpc::SslCredentials(tls);
  }
  AddressRing ring(options_.orchestrators);
  // One channel at a time, to the replica being dialled: moving on closes
  // the link to the one left (with one address it is made once, as ever).
  std::string dialled;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<apollo::v1::AgentGateway::Stub> stub;
  std::uniform_int_distribution<int64_t> quick_jitter(0, kQuickRetryJitter.count());
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    if (!stub || dialled != ring.current()) {
      dialled = ring.current();
      stub.reset();
      channel = grpc::CreateCustomChannel(dialled, creds, args);
      stub = apollo::v1::AgentGateway::NewStub(channel);
    }
    TimePoint started = clock_.Now();
    const SessionEnd end = RunSession(*stub, dialled);
    // A session that lasted a while resets the backoff; a quick failure
    // doubles it. Full jitter spreads a fleet's reconnects.
    if (clock_.Now() - started > std::chrono::seconds(10)) backoff = options_.initial_backoff;
    std::uniform_int_distribution<int64_t> jitter(0, backoff.count());
    Duration wait(jitter(rng));
    // Where next: admission control keeps the agent on the leader that
    // told it to come back; anything else moves on (address_ring.h).
    bool soon = false;
    if (end.accepted) ring.Reset();
    if (!end.come_back) {
      soon = ring.Failed(end.leader);
      if (end.not_leader) {
        NoteNotLeader(dialled, end.leader, ring.Find(end.leader).has_value(), ring.current(), soon);
      }
    }
    // Told by the center's admission control when to come back (a moment
    // it picked within the time it needs to take every agent waiting,
    // orchestrator/admission.h): then, plus up to a quarter of it, so agents
    // told the same do not return in lockstep. The center answered: nothing
    // failed, so the backoff does not grow.
    if (int64_t after = retry_after_ms_.exchange(0); after > 0) {
      std::uniform_int_distribution<int64_t> spread(0, after / 4);
      if (!SleepFor(std::chrono::milliseconds(after + spread(rng)))) return;
      continue;
    }
    if (soon) {
      // Another replica is still to be tried this round: soon, the backoff
      // kept as it is (it grows only once a whole round failed).
      wait = std::min<Duration>(kQuickRetry + Duration(quick_jitter(rng)), options_.max_backoff);
      if (!SleepFor(wait)) return;
      continue;
    }
    if (!SleepFor(wait)) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

Session::SessionEnd Session::RunSession(apollo::v1::AgentGateway::Stub& stub,
                                        const std::string& address) {
  SessionEnd end;
  grpc::ClientContext* ctx;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return end;
    context_ = std::make_unique<grpc::ClientContext>();
    ctx = context_.get();
  }
  auto stream = std::make_unique<SessionStream>(
      stub, ctx, [this](const CenterMessage& m) { return HandleInline(m); });
  AgentMessage hello;
  auto* h = hello.mutable_hello();
  h->set_node_id(options_.node_id);
  h->mutable_labels()->insert(options_.labels.begin(), options_.labels.end());
  for (const auto& g : options_.groups) h->add_groups(g);
  for (const auto& i : options_.intents) h->add_intents(i);
  for (const auto& i : options_.disabled_intents) h->add_disabled_intents(i);
  h->set_agent_version(options_.agent_version);
  h->set_protocol_version(kProtocolVersion);
  h->set_follows_heartbeat_pace(true);
  h->set_durable_seq(wal_.last_seq());
  h->set_acked_seq(wal_.acked_seq());
  if (executor_ && executor_->conservative()) h->set_mode(apollo::v1::AGENT_MODE_CONSERVATIVE);
  CenterMessage welcome;
  stream->Start(std::move(hello));
  const bool read = stream->Read(&welcome);
  if (!read || !welcome.has_welcome()) {
    if (read) ctx->TryCancel();  // it sent something else first: no session
    grpc::Status st = stream->Finish();
    if (std::optional<std::string> leader = NotLeaderRefusal(st)) {
      end.not_leader = true;  // Loop says so, knowing where it goes next
      end.leader = std::move(*leader);
      return end;
    }
    if (st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      int64_t ms = std::atoll(st.error_details().c_str());
      retry_after_ms_.store(ms > 0 ? ms : 1000);
      end.come_back = true;
    }
    NoteFailedStart(st, address);
    return end;
  }
  if (std::string why = ProtocolMismatch(welcome.welcome().protocol_version(), "edge-agent");
      !why.empty()) {
    // Retrying soon cannot help either: come back rarely, say it once.
    ctx->TryCancel();
    stream->Finish();
    retry_after_ms_.store(
        std::chrono::duration_cast<std::chrono::milliseconds>(options_.max_backoff).count());
    const std::string line = "refusing the center's session: " + why;
    if (line != last_failure_) Log(line);
    last_failure_ = line;
    return end;
  }
  end.accepted = true;
  last_failure_.clear();
  uint64_t stored = welcome.welcome().stored_seq();
  const uint64_t logged = wal_.last_seq();
  if (stored > logged) {
    Log("the store has events of this node up to seq " + std::to_string(stored) +
        " but the local log only up to " + std::to_string(logged) +
        " (log lost or wiped?): numbering continues above the store's");
    // The store has more of this node's events than this log: the log was
    // lost or wiped. Continue numbering above the store's, or every new
    // event would look like a duplicate.
    (void)wal_.AdvanceTo(stored);
  } else if (stored > wal_.acked_seq()) {
    (void)wal_.MarkAcked(stored);  // the store has them: they can leave the log
  }
  synced_.store(false);
  snapshot_acked_.store(false);
  backlog_target_.store(wal_.last_seq());
  sessions_.fetch_add(1);
  Log("connected to " + address + " (store has this node's events up to seq " +
      std::to_string(stored) + "; resending " + std::to_string(wal_.last_seq() - wal_.acked_seq()) +
      " unacknowledged)");
  {
    std::lock_guard<std::mutex> lock(mu_);
    writer_stop_ = false;
    out_.clear();
    pending_events_.clear();
    events_urgent_ = false;
  }
  connected_.store(true);
  // Resend what the store lacks, then live events (duplicates are harmless:
  // the store deduplicates by event_id).
  if (auto backlog = wal_.ReadUnacked(); backlog.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_events_.insert(pending_events_.begin(), backlog->begin(), backlog->end());
    events_urgent_ = true;
  }
  snapshot_not_before_us_.store(ToUnixMicros(clock_.Now() + options_.test_snapshot_delay));
  snapshot_due_.store(true);  // after the backlog: the center reconciles on it
  // A snapshot at least as often as either side asks: the center's
  // state_sync_interval (in Welcome) or this agent's, the shorter.
  Duration sync_interval = options_.state_sync_interval;
  if (welcome.welcome().state_sync_interval_ms() > 0) {
    sync_interval = std::min<Duration>(
        sync_interval, std::chrono::milliseconds(welcome.welcome().state_sync_interval_ms()));
  }
  // Heartbeats at the center's pace when it names one (here or later in a
  // HeartbeatPace): it decides when a silent session is cut off
  // (orchestrator/silence_watch.h), and asks a large fleet to beat less
  // often (orchestrator/heartbeat_pace.h).
  heartbeat_us_.store(options_.heartbeat_interval.count());
  SetHeartbeatPace(welcome.welcome().heartbeat_interval_ms());
  stream->EnableInline();  // the session is set up: acks may come now
  std::thread writer([this, s = stream.get(), sync_interval] { WriterLoop(s, sync_interval); });
  CenterMessage msg;
  while (stream->Read(&msg)) Handle(msg);
  connected_.store(false);
  synced_.store(false);
  last_contact_us_.store(ToUnixMicros(clock_.Now()));
  {
    std::lock_guard<std::mutex> lock(mu_);
    writer_stop_ = true;
  }
  cv_.notify_all();
  ctx->TryCancel();
  writer.join();
  stream->Finish();
  return end;
}

void Session::NoteNotLeader(const std::string& refused, const std::string& leader, bool listed,
                            const std::string& next, bool soon) {
  std::string line = "replica " + refused + " is not the leader";
  if (leader.empty()) {
    line += " (no leader is known yet)";
  } else if (!listed) {
    // Not dialled: only the configured addresses are (the operator's list
    // is what this agent may trust), so say how to fix it.
    line += " (it names the leader at " + leader +
            ", which is not among this agent's orchestrator addresses)";
  }
  line += "; trying " + next + (soon ? "" : " after a backoff");
  if (line == last_failure_) return;
  last_failure_ = line;
  Log(line);
}

void Session::NoteFailedStart(const grpc::Status& st, const std::string& address) {
  std::string line;
  switch (st.error_code()) {
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::FAILED_PRECONDITION:
      // Retrying soon cannot help (wrong certificate for this node id, a
      // protocol one side cannot speak): come back rarely, each time raising
      // an alert at the center.
      retry_after_ms_.store(
          std::chrono::duration_cast<std::chrono::milliseconds>(options_.max_backoff).count());
      line = "the center refused this agent: " + st.error_message();
      break;
    case grpc::StatusCode::UNAVAILABLE:
      // Plaintext: the center is down or restarting, nothing to say. With
      // TLS it may also be a refused handshake (wrong CA, name mismatch).
      if (options_.tls) {
        line = "cannot open a TLS session with " + address + ": " + st.error_message() +
               " (if the center is up, check that its certificate chains to --tls-ca and names "
               "this address, and that this agent's certificate is signed by its CA)";
      }
      break;
    default: break;
  }
  if (line.empty() || line == last_failure_) return;
  last_failure_ = line;
  Log(line);
}

AgentMessage Session::Heartbeat() const {
  AgentMessage m;
  auto* hb = m.mutable_heartbeat();
  hb->set_timestamp_us(ToUnixMicros(clock_.Now()));
  if (executor_) {
    for (const auto& p : executor_->Running()) {
      auto* r = hb->add_running();
      r->set_task_id(p.task_id);
      r->set_attempt(p.attempt);
      r->set_progress(p.fraction);
    }
    hb->set_queued(static_cast<uint32_t>(executor_->queued()));
    if (executor_->conservative()) hb->set_mode(apollo::v1::AGENT_MODE_CONSERVATIVE);
  }
  return m;
}

void Session::SetHeartbeatPace(int64_t interval_ms) {
  if (interval_ms <= 0) return;
  const Duration d = std::clamp<Duration>(std::chrono::milliseconds(interval_ms),
                                          std::chrono::seconds(1), std::chrono::minutes(5));
  heartbeat_us_.store(d.count());
}

void Session::WriterLoop(SessionStream* stream, Duration sync_interval) {
  auto heartbeat = [this] { return Duration(heartbeat_us_.load()); };
  TimePoint next_heartbeat = clock_.Now() + heartbeat();
  TimePoint next_snapshot = clock_.Now() + sync_interval;
  // Test only (test_duplicate_delivery): batches to write a second time.
  std::deque<std::pair<TimePoint, AgentMessage>> redeliver;
  for (;;) {
    std::deque<AgentMessage> out;
    std::vector<Event> events;
    // Asleep until the next thing due (heartbeat, periodic snapshot, a held
    // back snapshot, a test redelivery) unless woken by work: not every
    // 200 ms, which in a process of thousands of sessions (the benchmark's
    // fleet) was tens of thousands of wake-ups a second for nothing.
    TimePoint due = std::min(next_heartbeat, next_snapshot);
    if (snapshot_due_.load()) due = std::min(due, FromUnixMicros(snapshot_not_before_us_.load()));
    if (!redeliver.empty()) due = std::min(due, redeliver.front().first);
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Only ACCEPTEDs pending: they wait for the next final event, or
      // until the oldest has waited options_.accepted_hold.
      auto events_due = [this] {
        return events_urgent_ ||
               std::chrono::steady_clock::now() >= held_since_ + options_.accepted_hold;
      };
      for (;;) {
        const bool held = !pending_events_.empty();
        Duration wait =
            std::clamp<Duration>(due - clock_.Now(), std::chrono::milliseconds(1),
                                 std::max<Duration>(heartbeat(), std::chrono::milliseconds(1)));
        if (held) {
          wait = std::min(
              wait, std::chrono::duration_cast<Duration>(held_since_ + options_.accepted_hold -
                                                         std::chrono::steady_clock::now()));
        }
        // Woken too by the first held ACCEPTED, to shorten the wait to its hold.
        bool woken = wait > Duration::zero() && cv_.wait_for(lock, wait, [&] {
          return writer_stop_ || !out_.empty() || SnapshotReady() ||
                 (!pending_events_.empty() && (!held || events_due()));
        });
        if (!woken || writer_stop_ || !out_.empty() || SnapshotReady()) break;
        if (!pending_events_.empty() && events_due()) break;
      }
      if (writer_stop_) return;
      out.swap(out_);
      // A snapshot written now must not show a task whose ACCEPTED is
      // still held, so a due snapshot takes the held events along.
      if (!pending_events_.empty() && (events_due() || SnapshotReady())) {
        events.swap(pending_events_);
        events_urgent_ = false;
      }
    }
    for (size_t i = 0; i < events.size(); i += options_.max_batch) {
      AgentMessage m;
      size_t end = std::min(events.size(), i + options_.max_batch);
      for (size_t k = i; k < end; ++k) EventToProto(events[k], m.mutable_events()->add_events());
      if (!stream->Write(m)) return;
      if (options_.test_duplicate_delivery) {
        redeliver.emplace_back(clock_.Now() + std::chrono::milliseconds(300), std::move(m));
      }
    }
    while (!redeliver.empty() && clock_.Now() >= redeliver.front().first) {
      if (!stream->Write(redeliver.front().second)) return;
      redeliver.pop_front();
    }
    for (auto& m : out) {
      if (!stream->Write(m)) return;
    }
    // Built here, after the events queued before it were written: every
    // transition the snapshot shows has been sent or is about to be.
    if (clock_.Now() >= next_snapshot) snapshot_due_.store(true);
    if (SnapshotReady() && snapshot_due_.exchange(false)) {
      if (!stream->Write(BuildSnapshot())) return;
      next_snapshot = clock_.Now() + sync_interval;
    }
    if (clock_.Now() >= next_heartbeat) {
      if (!stream->Write(Heartbeat())) return;
      next_heartbeat = clock_.Now() + heartbeat();
    }
  }
}

bool Session::HandleInline(const CenterMessage& msg) {
  switch (msg.msg_case()) {
    case CenterMessage::kAck:
    case CenterMessage::kHeartbeatPace:
    case CenterMessage::kSnapshotAck:
    case CenterMessage::kSnapshotRequest:
      Handle(msg);
      return true;
    default:
      return false;
  }
}

void Session::Handle(const CenterMessage& msg) {
  switch (msg.msg_case()) {
    case CenterMessage::kIntents: {
      // One message, one WAL group commit for all its intents.
      if (!executor_) break;
      std::vector<IntentRequest> requests;
      requests.reserve(msg.intents().intents_size());
      for (const auto& i : msg.intents().intents()) requests.push_back(FromProto(i));
      if (options_.test_intent_delay.count() > 0) {
        // Test knob: a slow agent takes one intent at a time.
        for (auto& r : requests) {
          if (!SleepFor(options_.test_intent_delay)) return;
          (void)executor_->DeliverBatch({std::move(r)});
        }
        break;
      }
      (void)executor_->DeliverBatch(requests);
      break;
    }
    case CenterMessage::kAck: {
      uint64_t seq = std::min(msg.ack().acked_seq(), wal_.last_seq());
      // Lazy: no fdatasync of its own (it rides with the next append), so
      // the stream's reader is not held up by the disk. A watermark lost in
      // a crash only means a resend that the store deduplicates.
      if (seq > wal_.acked_seq()) (void)wal_.MarkAckedLazy(seq);
      MaybeSynced();
      break;
    }
    case CenterMessage::kHeartbeatPace:
      SetHeartbeatPace(msg.heartbeat_pace().heartbeat_interval_ms());
      break;
    case CenterMessage::kSnapshotAck:
      snapshot_acked_.store(true);
      MaybeSynced();
      break;
    case CenterMessage::kSnapshotRequest:
      snapshot_due_.store(true);
      cv_.notify_all();
      break;
    case CenterMessage::kCancel:
      if (executor_) {
        // The center stops a run at its execution or start deadline with
        // reason "timeout" (or "not_started"): the run ends TIMEOUT here too.
        const std::string& why = msg.cancel().reason();
        bool as_timeout = why == "timeout" || why == "not_started";
        (void)executor_->Cancel(msg.cancel().task_id(), msg.cancel().attempt(), as_timeout);
      }
      break;
    case CenterMessage::kProgressQuery: {
      AgentMessage reply;
      auto* r = reply.mutable_progress();
      r->set_task_id(msg.progress_query().task_id());
      r->set_attempt(msg.progress_query().attempt());
      r->set_fraction(-1);
      if (executor_) {
        if (auto p = executor_->Progress(msg.progress_query().task_id())) {
          r->set_running(true);
          r->set_fraction(p->fraction);
          r->set_message(p->message);
          if (p->reported_at != TimePoint{}) r->set_last_progress_us(ToUnixMicros(p->reported_at));
        }
      }
      Enqueue(std::move(reply));
      break;
    }
    default: break;
  }
}

}  // namespace apollo::agent
