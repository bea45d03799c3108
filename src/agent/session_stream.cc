#include "agent/session_stream.h"

namespace apollo::agent {

using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;

SessionStream::SessionStream(apollo::v1::AgentGateway::Stub& stub, grpc::ClientContext* ctx,
                             InlineHandler handle_inline)
    : ctx_(ctx), handle_inline_(std::move(handle_inline)) {
  stub.async()->Connect(ctx, this);
}

void SessionStream::Start(AgentMessage first) {
  // Writes come from the session's writer thread, outside any reaction:
  // the hold keeps the call (and OnDone) open until Finish says no more
  // will come.
  AddHold();
  {
    std::lock_guard<std::mutex> lock(mu_);
    out_.push_back(std::move(first));
    writing_ = true;
  }
  StartWrite(&out_.front());
  StartRead(&in_);
  StartCall();
}

void SessionStream::OnReadDone(bool ok) {
  if (!ok) {
    std::lock_guard<std::mutex> lock(mu_);
    read_ended_ = true;
    inbox_cv_.notify_all();
    return;
  }
  if (!inline_on_.load() || !handle_inline_ || !handle_inline_(in_)) {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_.push_back(std::move(in_));
    inbox_cv_.notify_all();
  }
  in_.Clear();
  StartRead(&in_);
}

void SessionStream::EnableInline() { inline_on_.store(true); }

bool SessionStream::Read(CenterMessage* msg) {
  std::unique_lock<std::mutex> lock(mu_);
  inbox_cv_.wait(lock, [this] { return !inbox_.empty() || read_ended_; });
  if (inbox_.empty()) return false;
  *msg = std::move(inbox_.front());
  inbox_.pop_front();
  return true;
}

bool SessionStream::Write(AgentMessage msg) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    room_cv_.wait(lock, [this] { return out_.size() < kMaxQueued || write_failed_ || done_; });
    if (write_failed_ || done_) return false;
    out_.push_back(std::move(msg));
    if (writing_) return true;
    writing_ = true;
  }
  WriteFront();
  return true;
}

void SessionStream::WriteFront() {
  // out_.front() stays where it is until its OnWriteDone pops it (a deque
  // keeps its elements in place as it grows at the back).
  AgentMessage* front;
  {
    std::lock_guard<std::mutex> lock(mu_);
    front = &out_.front();
  }
  StartWrite(front);
}

void SessionStream::OnWriteDone(bool ok) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    out_.pop_front();
    room_cv_.notify_all();  // a Write waiting for room
    if (!ok) {
      write_failed_ = true;
      writing_ = false;
      out_.clear();
    } else if (out_.empty()) {
      writing_ = false;
      return;
    }
  }
  if (!ok) {
    // Nothing more can be sent on this stream: end it (see the header).
    ctx_->TryCancel();
    return;
  }
  WriteFront();
}

void SessionStream::OnDone(const grpc::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  status_ = status;
  done_ = true;
  read_ended_ = true;
  inbox_cv_.notify_all();
  room_cv_.notify_all();
}

grpc::Status SessionStream::Finish() {
  RemoveHold();
  std::unique_lock<std::mutex> lock(mu_);
  room_cv_.wait(lock, [this] { return done_; });
  return status_;
}

}  // namespace apollo::agent
