#include "orchestrator/agent_session.h"

#include "core/config_values.h"
#include "core/version.h"

namespace apollo::orchestrator {

using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;

bool SessionHandle::Send(CenterMessage msg) {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_ == nullptr) return false;
  session_->Enqueue(std::move(msg));
  return true;
}

bool SessionHandle::connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_ != nullptr;
}

void SessionHandle::BatchCommitted() {
  // Under mu_, so OnDone (which detaches under mu_ before deleting the
  // reactor) cannot run in between.
  std::lock_guard<std::mutex> lock(mu_);
  if (session_ != nullptr) session_->OnBatchCommitted();
}

void SessionHandle::Close(grpc::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_ != nullptr) session_->End(std::move(status));
}

void SessionHandle::HoldExpired() {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_ != nullptr) session_->OnHoldExpired();
}

void SessionHandle::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  session_ = nullptr;
}

AgentSession::AgentSession(SessionHost& host, PeerIdentity peer, grpc::CallbackServerContext* ctx,
                           SessionBounds bounds)
    : host_(host), peer_(std::move(peer)), ctx_(ctx), bounds_(std::move(bounds)) {
  if (bounds_.hello != nullptr) bounds_.hello->Add(this);
  StartRead(&in_);
}

void AgentSession::HelloTimedOut() {
  End(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                   "no Hello within " + FormatDuration(bounds_.hello->timeout()) +
                       " of opening the stream (limits.hello_timeout)"));
}

namespace {
int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

std::optional<std::chrono::steady_clock::time_point> AgentSession::LastHeard() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (read_paused_ || finished_) return std::nullopt;  // not listening: not silent
  }
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(heard_ns_.load()));
}

void AgentSession::SilenceTimedOut(Duration silent) {
  // The link is most likely cut: the status may never reach the agent, so
  // cancel the stream to end it here now (the center shows it disconnected)
  // and let the transport drop what it still holds.
  if (End(grpc::Status(
          grpc::StatusCode::UNAVAILABLE,
          "nothing heard from this agent for " +
              FormatDuration(std::chrono::duration_cast<std::chrono::seconds>(silent)) +
              " (2.5 heartbeat intervals): stream closed; reconnect"))) {
    ctx_->TryCancel();
  }
}

void AgentSession::ReadNext() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;  // Close()d: no read after Finish
  }
  in_.Clear();
  StartRead(&in_);
}

void AgentSession::OnBatchCommitted() {
  bool resume = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --batches_in_flight_;
    resume = read_paused_;
    read_paused_ = false;
  }
  // Not heard while not read: the silence counts from now.
  if (resume) heard_ns_.store(SteadyNowNs());
  if (resume) ReadNext();
}

bool AgentSession::End(grpc::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return false;
  finished_ = true;
  Finish(std::move(status));
  return true;
}

void AgentSession::Refuse(const std::string& node_id, const std::string& why) {
  host_.OnRefused(kImpersonationRefused, node_id,
                  why + " (peer " + peer_.peer + "): stream refused");
  End(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, why));
}

bool AgentSession::OwnEvents(const apollo::v1::EventBatch& batch) {
  for (const auto& e : batch.events()) {
    // An empty node_id is a malformed event, recorded as such under this
    // node by the host; naming another node is an attempt to write its rows.
    if (e.node_id().empty() || e.node_id() == handle_->node_id()) continue;
    Refuse(handle_->node_id(), "node " + handle_->node_id() + " sent an event of node " +
                                   ShownId(e.node_id()) + " (" + ShownId(e.event_id()) + ")");
    return false;
  }
  return true;
}

void AgentSession::OnReadDone(bool ok) {
  if (!ok) {  // the agent closed its side or the stream broke
    End(grpc::Status::OK);
    return;
  }
  heard_ns_.store(SteadyNowNs());
  if (!handle_ && bounds_.hello != nullptr) bounds_.hello->Remove(this);  // it spoke in time
  if (!handle_ && in_.msg_case() != AgentMessage::kHello) {
    End(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "the first message must be Hello"));
    return;
  }
  Handle(in_);
}

void AgentSession::Handle(const AgentMessage& msg) {
  switch (msg.msg_case()) {
    case AgentMessage::kHello: {
      if (handle_) {
        End(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "Hello sent twice"));
        return;
      }
      // An agent speaking a protocol this center cannot: an alert, and one
      // line back to the agent saying which side to upgrade. Nothing else.
      if (std::string why = ProtocolMismatch(msg.hello().protocol_version(), "orchestrator");
          !why.empty()) {
        host_.OnRefused(kProtocolRefused, ShownId(msg.hello().node_id()),
                        why + " (peer " + peer_.peer + "): stream refused");
        End(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, why));
        return;
      }
      // Before anything else: an impersonator must not reach the host, which
      // would replace the real node's session and rewrite its row.
      if (auto why = HelloRefusal(peer_, msg.hello().node_id())) {
        Refuse(peer_.node_id.empty() ? ShownId(msg.hello().node_id()) : peer_.node_id, *why);
        return;
      }
      handle_ = std::make_shared<SessionHandle>(msg.hello().node_id());
      {
        std::lock_guard<std::mutex> lock(handle_->mu_);
        handle_->session_ = this;
      }
      CenterMessage welcome;
      grpc::Status st = host_.OnHello(handle_, msg.hello(), welcome.mutable_welcome());
      if (!st.ok()) {
        handle_->Detach();
        End(st);
        return;
      }
      welcome.mutable_welcome()->set_protocol_version(kProtocolVersion);
      // Watched before the Welcome goes out: a HeartbeatPace held back
      // until then (see Enqueue) must find it watched to extend it.
      if (bounds_.silence != nullptr && msg.hello().follows_heartbeat_pace()) {
        bounds_.silence->Add(
            this,
            SilenceLimitFor(std::chrono::milliseconds(welcome.welcome().heartbeat_interval_ms())));
      }
      Enqueue(std::move(welcome));
      ReadNext();
      return;
    }
    case AgentMessage::kEvents: {
      if (!OwnEvents(msg.events())) return;
      // Taken out of in_ before the count below: from then on a commit
      // finishing may start the next read into in_.
      apollo::v1::EventBatch batch = std::move(*in_.mutable_events());
      // Read on while fewer than kMaxBatchesInFlight batches are
      // committing; at the bound, the last commit to finish resumes reading
      // (back-pressure, see the header). Counted before the host sees the
      // batch: its commit may finish before OnEvents returns.
      bool read_on = false;
      bool cut = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        read_on = ++batches_in_flight_ < kMaxBatchesInFlight;
        read_paused_ = !read_on;
        // The agent answered: held intents go now (intent_hold.h).
        if (auto held = hold_.Answered()) cut = !PushLocked(std::move(*held));
      }
      if (cut) ctx_->TryCancel();
      auto handle = handle_;
      auto traffic = bounds_.traffic;
      if (traffic) traffic->BatchRead();
      host_.OnEvents(handle_, std::move(batch), [handle, traffic](uint64_t acked) {
        if (traffic) traffic->BatchCommitted();
        if (acked > 0) {
          CenterMessage ack;
          ack.mutable_ack()->set_acked_seq(acked);
          handle->Send(std::move(ack));
        }
        handle->BatchCommitted();
      });
      if (read_on) ReadNext();
      return;
    }
    case AgentMessage::kHeartbeat: host_.OnHeartbeat(handle_, msg.heartbeat()); break;
    case AgentMessage::kSnapshot: host_.OnSnapshot(handle_, msg.snapshot()); break;
    case AgentMessage::kProgress: host_.OnProgress(handle_, msg.progress()); break;
    default: break;  // unknown (newer) message kinds are ignored
  }
  ReadNext();
}

void AgentSession::Enqueue(CenterMessage msg) {
  // A new pace for the agent: it may be quiet for longer. (Before mu_: the
  // watch calls into this session under its own lock.)
  if (msg.has_heartbeat_pace() && bounds_.silence != nullptr) {
    bounds_.silence->Extend(
        this,
        SilenceLimitFor(std::chrono::milliseconds(msg.heartbeat_pace().heartbeat_interval_ms())));
  }
  bool cut = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    if (welcomed_) {
      cut = !SendLocked(std::move(msg));
    } else if (!msg.has_welcome()) {
      // The Welcome is the first message the agent reads: anything the host
      // sends before it (the session is the node's from OnHello on: a
      // HeartbeatPace to every session, a Cancel) waits and follows it. An
      // agent reading something else first drops the session.
      if (early_.size() < kMaxEarlyMessages) early_.push_back(std::move(msg));
      return;
    } else {
      welcomed_ = true;
      cut = !PushLocked(std::move(msg));
      for (CenterMessage& m : early_) {  // after the Welcome, in their order
        if (!cut) cut = !PushLocked(std::move(m));
      }
      early_.clear();
    }
  }
  // A peer that does not read would never receive the status either:
  // cancel the stream so the transport drops what it still holds. (The
  // reactor is alive: Enqueue runs under SessionHandle's lock or on a
  // reaction, and OnDone waits for both.)
  if (cut) ctx_->TryCancel();
}

bool AgentSession::SendLocked(CenterMessage msg) {
  if (msg.has_intents()) {
    SessionTraffic* traffic = bounds_.traffic.get();
    std::optional<CenterMessage> now =
        hold_.Offer(std::move(msg), traffic != nullptr && traffic->busy());
    if (traffic != nullptr) traffic->IntentsOffered(hold_.last_offer());
    if (hold_.holding()) {
      ArmHoldLocked(hold_.why() == Held::kBusy ? bounds_.busy_hold_limit
                                               : bounds_.intent_hold_limit);
    }
    return !now || PushLocked(std::move(*now));
  }
  // Acks and paces are about the agent's own events and liveness; anything
  // else (a Cancel of a held intent, say) must find the intents sent.
  if (!msg.has_ack() && !msg.has_heartbeat_pace()) {
    if (auto held = hold_.Release(); held && !PushLocked(std::move(*held))) return false;
  }
  return PushLocked(std::move(msg));
}

bool AgentSession::PushLocked(CenterMessage msg) {
  if (finished_) return true;  // ended already: nothing more goes out
  const size_t bytes = msg.ByteSizeLong();
  const size_t cap = static_cast<size_t>(bounds_.max_outbound_bytes);
  // One message alone is always let through (the cap is far above the
  // largest, see core/wire_limits.h); a queue that keeps growing is not.
  if (cap == 0 || out_.empty() || out_bytes_ + bytes <= cap) {
    if (msg.has_intents() && bounds_.traffic) {
      bounds_.traffic->IntentMessageSent(msg.intents().intents_size());
    }
    out_bytes_ += bytes;
    out_.push_back(Outgoing{std::move(msg), bytes});
    if (!writing_) {
      writing_ = true;
      StartWrite(&out_.front().msg);
    }
    return true;
  }
  // The peer stopped reading. Keep only the message gRPC is writing.
  cut_off_ = "the peer stopped reading: " + std::to_string(out_bytes_ + bytes) +
             " bytes waiting to be sent, over the cap of " + std::to_string(cap) +
             " (limits.session_outbound_mib); stream cut off (it reconnects and resends)";
  while (out_.size() > (writing_ ? 1u : 0u)) {
    out_bytes_ -= out_.back().bytes;
    out_.pop_back();
  }
  finished_ = true;
  Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, cut_off_));
  return false;
}

void AgentSession::ArmHoldLocked(Duration limit) {
  if (hold_armed_) return;  // the armed alarm releases whatever is held when it fires
  hold_armed_ = true;
  // A fresh alarm each time (the last one has fired). Its callback holds
  // the handle, not the session: after OnDone it finds nothing to do.
  hold_alarm_ = std::make_unique<grpc::Alarm>();
  hold_alarm_->Set(std::chrono::system_clock::now() + limit,
                   [handle = handle_](bool fired) {
                     if (fired) handle->HoldExpired();
                   });
}

void AgentSession::OnHoldExpired() {
  bool cut = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hold_armed_ = false;
    if (auto held = hold_.Release()) cut = !PushLocked(std::move(*held));
  }
  if (cut) ctx_->TryCancel();
}

void AgentSession::OnWriteDone(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!out_.empty()) {
    out_bytes_ -= out_.front().bytes;
    out_.pop_front();
  }
  if (!ok || finished_) {
    writing_ = false;
    out_.clear();
    out_bytes_ = 0;
    return;
  }
  if (out_.empty()) {
    writing_ = false;
    return;
  }
  StartWrite(&out_.front().msg);
}

void AgentSession::OnDone() {
  if (bounds_.hello != nullptr) bounds_.hello->Remove(this);  // before it is freed
  if (bounds_.silence != nullptr) bounds_.silence->Remove(this);
  if (handle_) {
    handle_->Detach();
    std::string cut_off;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cut_off = cut_off_;
    }
    if (!cut_off.empty()) host_.OnRefused(kSessionCutOff, handle_->node_id(), cut_off);
    host_.OnDisconnect(handle_);
  }
  delete this;  // gives the stream slot back
}

}  // namespace apollo::orchestrator
