#include "orchestrator/agent_session.h"

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

void SessionHandle::ResumeReading() {
  // Under mu_, so OnDone (which detaches under mu_ before deleting the
  // reactor) cannot run in between.
  std::lock_guard<std::mutex> lock(mu_);
  if (session_ != nullptr) session_->ReadNext();
}

void SessionHandle::Close(grpc::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_ != nullptr) session_->End(std::move(status));
}

void SessionHandle::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  session_ = nullptr;
}

AgentSession::AgentSession(SessionHost& host, PeerIdentity peer)
    : host_(host), peer_(std::move(peer)) {
  StartRead(&in_);
}

void AgentSession::ReadNext() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;  // Close()d: no read after Finish
  }
  in_.Clear();
  StartRead(&in_);
}

void AgentSession::End(grpc::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  Finish(std::move(status));
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
      Enqueue(std::move(welcome));
      ReadNext();
      return;
    }
    case AgentMessage::kEvents: {
      if (!OwnEvents(msg.events())) return;
      // Keep reading only after the commit: back-pressure (see header).
      auto handle = handle_;
      host_.OnEvents(handle_, msg.events(), [handle](uint64_t acked) {
        if (acked > 0) {
          CenterMessage ack;
          ack.mutable_ack()->set_acked_seq(acked);
          handle->Send(std::move(ack));
        }
        handle->ResumeReading();
      });
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
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  out_.push_back(std::move(msg));
  if (!writing_) {
    writing_ = true;
    StartWrite(&out_.front());
  }
}

void AgentSession::OnWriteDone(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!out_.empty()) out_.pop_front();
  if (!ok || finished_) {
    writing_ = false;
    out_.clear();
    return;
  }
  if (out_.empty()) {
    writing_ = false;
    return;
  }
  StartWrite(&out_.front());
}

void AgentSession::OnDone() {
  if (handle_) {
    handle_->Detach();
    host_.OnDisconnect(handle_);
  }
  delete this;
}

}  // namespace apollo::orchestrator
