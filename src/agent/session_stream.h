#pragma once

// The agent's end of one AgentGateway.Connect stream, on gRPC's callback
// API: reads and writes complete on gRPC's few threads, not on a reader and
// a writer thread per session blocked in the synchronous API. Those blocked
// threads took turns as gRPC's poller: a process with many sessions (the
// benchmark's simulated fleet) paid several context switches for every
// message it received (BENCHMARKS.md, "the agent's stream on callbacks").
//
// The session keeps its own two threads for the work that may block (a
// received intent is logged with an fdatasync before it runs; snapshots and
// heartbeats are timed), and talks to the stream as it did to the
// synchronous one: Read blocks for the next message, Write queues one,
// Finish returns the status. Messages the `inline` handler accepts (acks and
// other small bookkeeping, never anything that touches the disk) are handled
// on gRPC's thread as they arrive and never wake the reader.
//
// A write that fails ends the stream: the call is cancelled, so Read
// returns false and the session reconnects. (Under a reconnect storm of
// 10,000 agents, gRPC reported a failed write on a call whose reads went on:
// the agent's writer stopped, its reader waited, and the center heard
// nothing more until its silence limit cut the stream, minutes later.)
//
// Order: Start, then Read and Write from any thread (one reader, one
// writer), then TryCancel on the context unless Read already returned
// false, then Finish once, after the last Write returned. The object must
// outlive Finish.
//
// Thread-safety: as above.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

#include "apollo/v1/agent.grpc.pb.h"

namespace apollo::agent {

class SessionStream final
    : public grpc::ClientBidiReactor<apollo::v1::AgentMessage, apollo::v1::CenterMessage> {
 public:
  // Returns true when it handled `msg` (on a gRPC thread: must not block);
  // false: Read hands it to the reader. Asked only after EnableInline.
  using InlineHandler = std::function<bool(const apollo::v1::CenterMessage&)>;

  SessionStream(apollo::v1::AgentGateway::Stub& stub, grpc::ClientContext* ctx,
                InlineHandler handle_inline);

  // Opens the stream with `first` as its first message.
  void Start(apollo::v1::AgentMessage first);
  // From now on messages go to the inline handler first. Until then (the
  // Welcome, and whatever follows it while the session sets itself up)
  // every message waits for Read, in order.
  void EnableInline();
  // The next message not handled inline; false once the stream ended.
  bool Read(apollo::v1::CenterMessage* msg);
  // Queues `msg`; waits while kMaxQueued are still being written (the peer
  // or the link is slow: back-pressure, as the synchronous Write blocked).
  // False once a write failed or the stream ended.
  bool Write(apollo::v1::AgentMessage msg);
  // Waits until the stream ended and returns its status.
  grpc::Status Finish();

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  // Messages queued (being written included) before Write waits.
  static constexpr size_t kMaxQueued = 4;

  void WriteFront();  // starts writing out_.front(); mu_ not held

  grpc::ClientContext* const ctx_;
  const InlineHandler handle_inline_;
  apollo::v1::CenterMessage in_;  // the read in progress (gRPC's until OnReadDone)

  std::atomic<bool> inline_on_{false};

  std::mutex mu_;
  // Two, so a write finishing never wakes the reader (it waits nearly all
  // the time) and a message arriving never wakes a writer waiting for room.
  std::condition_variable inbox_cv_;             // Read waits: a message or the end
  std::condition_variable room_cv_;              // Write waits for room, Finish for OnDone
  std::deque<apollo::v1::CenterMessage> inbox_;  // guarded by mu_
  bool read_ended_ = false;                      // guarded by mu_
  std::deque<apollo::v1::AgentMessage> out_;     // guarded by mu_; front() is being written
  bool writing_ = false;                         // guarded by mu_
  bool write_failed_ = false;                    // guarded by mu_
  bool done_ = false;                            // guarded by mu_: OnDone ran
  grpc::Status status_;                          // guarded by mu_: set by OnDone
};

}  // namespace apollo::agent
