#pragma once

// One connected agent: the server side of AgentGateway.Connect, as a gRPC
// callback reactor (many streams on few threads).
//
// Protocol, in order: the agent sends Hello; the session registers the node
// in the store and answers Welcome(stored_seq) so the agent resends only
// what the store lacks; from then on EventBatches are applied through the
// store and acknowledged (EventAck) only after the commit; Heartbeats and
// Snapshots update liveness; the dispatcher pushes Intents and Cancels.
//
// Identity: every event must be the stream's own node's (always). With TLS
// on (peer_identity.h) the Hello must also name the node of the peer's
// certificate. Otherwise the stream ends with PERMISSION_DENIED and the host
// raises an impersonation_refused alert; a refused Hello is refused BEFORE
// the host sees it, so the real node's session, sequence numbers and rows
// are never touched. (Heartbeats and snapshots carry no node id: they always
// count for the stream's own node.)
//
// Pipelining and back-pressure: up to kMaxBatchesInFlight EventBatches of
// one session are being committed at once (the next one is applied while
// the previous one commits, so an agent's ACCEPTED and its SUCCEEDED just
// after do not wait for each other's round trip); at that bound the session
// does not read the next message, so a fast agent cannot queue unbounded
// work in the center and gRPC flow control pushes back to it. The store
// commits a session's batches in the order they were read and each ack is
// sent after its batch committed, in that order (acks are cumulative: a
// batch that fails to commit ends the stream before any later ack).
//
// Coalescing: while the agent has not answered the last intent message it
// was sent (no EventBatch read since), new intents wait and go out together
// when it answers, or after SessionBounds::intent_hold_limit (intent_hold.h).
// While the center is busy (SessionBounds::traffic: too many EventBatches of
// all sessions committing), new intents wait even for an agent that has
// answered, up to SessionBounds::busy_hold_limit, and go together. Acks and
// heartbeat paces overtake held intents; any other message goes after them.
//
// Bounds (SessionBounds, set by the gateway): the stream holds one of the
// gateway's stream slots until it ends; it must say Hello within the
// gateway's Hello deadline or it is ended with DEADLINE_EXCEEDED; once past
// Hello, a stream from which nothing is heard for the silence limit (about
// two heartbeat intervals, silence_watch.h) is ended with UNAVAILABLE and
// cancelled, so a silently cut agent shows as disconnected; and the
// messages waiting to be written to its peer are bounded by bytes: a peer
// that stops reading is cut off (RESOURCE_EXHAUSTED, the stream cancelled
// so the transport frees it), with a session_cut_off alert. Nothing about
// its rows changes: the agent reconnects and resends what is not
// acknowledged, and unacknowledged intents are sent again at their ack
// timeout.
//
// Lifetime: gRPC owns the reactor until OnDone, which unregisters it and
// deletes it. Other threads reach it only through SessionHandle, which
// stops forwarding once the reactor is gone.
//
// Thread-safety: Send* may be called from any thread.

#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "apollo/v1/agent.grpc.pb.h"
#include "orchestrator/concurrency_limit.h"
#include "orchestrator/hello_deadlines.h"
#include "orchestrator/intent_hold.h"
#include "orchestrator/peer_identity.h"
#include "orchestrator/session_traffic.h"
#include "orchestrator/silence_watch.h"

namespace apollo::orchestrator {

class AgentSession;
class SessionHost;

// A weak, thread-safe reference to a live session.
class SessionHandle {
 public:
  explicit SessionHandle(std::string node_id) : node_id_(std::move(node_id)) {}
  // False if the stream is gone.
  bool Send(apollo::v1::CenterMessage msg);
  const std::string& node_id() const { return node_id_; }
  bool connected() const;
  // An EventBatch of this session finished committing (see OnEvents): reads
  // the next message if reading was paused at the bound.
  void BatchCommitted();
  // Ends the stream with `status` (the agent reconnects and resends what is
  // not acknowledged). No-op if the stream is gone.
  void Close(grpc::Status status);
  // Intents held this long (the agent answered nothing): sends them.
  void HoldExpired();
  // Set once the center reconciled the agent's snapshot after Hello; only
  // then is the agent handed new work (hello -> backlog -> snapshot ->
  // intents, in that order).
  // The agent leaves conservative mode when it reads the SnapshotAck sent
  // just before this, so from here on it is not conservative any more.
  void MarkReady() {
    conservative_.store(false);
    ready_.store(true);
  }
  bool ready() const { return ready_.load(); }
  // The agent said in its Hello that it is in conservative mode (cut off
  // past its autonomy window): it takes no new work until it is ready.
  void SetConservative(bool on) { conservative_.store(on); }
  bool conservative() const { return conservative_.load(); }

 private:
  friend class AgentSession;
  void Detach();
  const std::string node_id_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> conservative_{false};
  mutable std::mutex mu_;
  AgentSession* session_ = nullptr;  // guarded by mu_; null once detached
};

// What a session needs from the rest of the orchestrator.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  // Hello received. Returns the Welcome to send, or an error that ends the
  // stream (e.g. RESOURCE_EXHAUSTED: come back later).
  virtual grpc::Status OnHello(const std::shared_ptr<SessionHandle>& handle,
                               const apollo::v1::Hello& hello,
                               apollo::v1::Welcome* welcome) = 0;
  // An EventBatch: apply it and call `done(acked_seq)` after the commit (from
  // any thread; acked_seq 0 = nothing to acknowledge). `done` must be called
  // exactly once.
  virtual void OnEvents(const std::shared_ptr<SessionHandle>& handle,
                        apollo::v1::EventBatch batch, std::function<void(uint64_t)> done) = 0;
  virtual void OnHeartbeat(const std::shared_ptr<SessionHandle>& handle,
                           const apollo::v1::Heartbeat& hb) = 0;
  virtual void OnSnapshot(const std::shared_ptr<SessionHandle>& handle,
                          const apollo::v1::Snapshot& snapshot) = 0;
  virtual void OnProgress(const std::shared_ptr<SessionHandle>& handle,
                          const apollo::v1::ProgressReply& reply) = 0;
  virtual void OnDisconnect(const std::shared_ptr<SessionHandle>& handle) = 0;
  // A stream refused for what its peer did (`kind`, e.g. kImpersonationRefused):
  // record an operator alert about `node_id`. The stream ends right after;
  // nothing else about the node may change.
  virtual void OnRefused(const std::string& kind, const std::string& node_id,
                         const std::string& detail) = 0;
};

// Alert kind: a session cut off because its peer stopped reading.
inline constexpr char kSessionCutOff[] = "session_cut_off";
// Alert kind: an agent whose Hello names a protocol this center cannot speak
// (core/version.h); the stream ends with FAILED_PRECONDITION.
inline constexpr char kProtocolRefused[] = "protocol_refused";

// What bounds one session (see the header comment).
struct SessionBounds {
  std::optional<ConcurrencyLimit::Lease> slot;  // held until the stream ends
  HelloDeadlines* hello = nullptr;              // null: no Hello deadline
  SilenceWatch* silence = nullptr;              // null: never ended for silence
  int64_t max_outbound_bytes = 0;               // 0: unbounded
  Duration intent_hold_limit = kIntentHoldLimit;  // intent_hold.h
  Duration busy_hold_limit = kBusyHoldLimit;      // intent_hold.h
  // Shared by the gateway's sessions; null: never busy, nothing counted.
  std::shared_ptr<SessionTraffic> traffic;
};

class AgentSession final
    : public grpc::ServerBidiReactor<apollo::v1::AgentMessage, apollo::v1::CenterMessage>,
      private HelloWaiter,
      private SilentPeer {
 public:
  // `peer`: who the transport says is calling (IdentityOf). `ctx`: the
  // stream's, to cancel it when its peer is cut off.
  AgentSession(SessionHost& host, PeerIdentity peer, grpc::CallbackServerContext* ctx,
               SessionBounds bounds);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;
  void OnCancel() override {}

 private:
  friend class SessionHandle;
  struct Outgoing {
    apollo::v1::CenterMessage msg;
    size_t bytes = 0;  // serialized
  };
  // HelloWaiter: called by the gateway's sweeper (under its lock).
  void HelloTimedOut() override;
  // SilentPeer: called by the gateway's silence watch (under its lock).
  std::optional<std::chrono::steady_clock::time_point> LastHeard() const override;
  void SilenceTimedOut(Duration silent) override;
  void Enqueue(apollo::v1::CenterMessage msg);  // any thread
  // Both with mu_ held. False: the stream was cut off (the outbound queue
  // passed its cap) and the caller must cancel it, outside mu_.
  bool SendLocked(apollo::v1::CenterMessage msg);  // through the intent hold
  bool PushLocked(apollo::v1::CenterMessage msg);  // straight to the queue
  void ArmHoldLocked(Duration limit);
  void OnHoldExpired();
  void Handle(const apollo::v1::AgentMessage& msg);
  void ReadNext();
  void OnBatchCommitted();
  // Finishes the stream with `status`; false if it was finished already.
  bool End(grpc::Status status);
  // Ends the stream with PERMISSION_DENIED `why` and an alert about `node_id`.
  void Refuse(const std::string& node_id, const std::string& why);
  // False (and the stream refused) if `batch` holds another node's event.
  bool OwnEvents(const apollo::v1::EventBatch& batch);

  SessionHost& host_;
  const PeerIdentity peer_;
  grpc::CallbackServerContext* const ctx_;
  SessionBounds bounds_;
  apollo::v1::AgentMessage in_;
  std::shared_ptr<SessionHandle> handle_;  // set at Hello

  mutable std::mutex mu_;
  std::deque<Outgoing> out_;  // guarded by mu_; front() is being written
  size_t out_bytes_ = 0;      // guarded by mu_: the sum of out_'s bytes
  bool writing_ = false;      // guarded by mu_
  bool finished_ = false;     // guarded by mu_
  std::string cut_off_;       // guarded by mu_: why the peer was cut off, if it was
  int batches_in_flight_ = 0;  // guarded by mu_: EventBatches applied, not yet committed
  bool read_paused_ = false;   // guarded by mu_: at the bound, no read outstanding
  bool welcomed_ = false;      // guarded by mu_: the Welcome is queued
  std::deque<apollo::v1::CenterMessage> early_;  // guarded by mu_: sent before it
  IntentHold hold_;                              // guarded by mu_
  bool hold_armed_ = false;                      // guarded by mu_: hold_alarm_ has not fired yet
  std::unique_ptr<grpc::Alarm> hold_alarm_;      // guarded by mu_
  // When the last message arrived (or reading resumed), steady clock ns.
  std::atomic<int64_t> heard_ns_{0};
};

// EventBatches of one session being committed at once (see the header).
inline constexpr int kMaxBatchesInFlight = 4;
// Messages held back until the Welcome (a few at most in practice).
inline constexpr size_t kMaxEarlyMessages = 64;

}  // namespace apollo::orchestrator
