#pragma once

// The agent's link to the center: dials the orchestrator (agents always
// dial out, so nodes behind NAT work), keeps one AgentGateway.Connect
// stream open, and reconnects by itself with exponential backoff and full
// jitter so 500 agents do not stampede a center that comes back.
//
// Replicas (docs/replicas.md): given several addresses, the session dials
// one at a time and keeps to the one that accepted it. Only the leader
// accepts; a follower refuses the Hello (UNAVAILABLE, the leader's
// host:port in the status details). On a refusal, a failed
// connect or a broken stream it moves on (address_ring.h), to the named
// leader when that is listed; the next dial comes after 200-500 ms, not
// after the backoff, until every address failed in the round: then the
// backoff applies as with one center. Admission control ("come back
// later") keeps it on the same address.
//
// Each session runs: Hello -> Welcome(stored_seq) -> resend every event in
// the WAL the store lacks -> live events, heartbeats and intents. An event
// leaves the WAL's unacknowledged tail only on EventAck, which the center
// sends after its store committed.
//
// Thread-safety: Start/Stop from one thread; OnDurableEvent from any.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/event_sink.h"
#include "agent/executor.h"
#include "agent/session_monitor.h"
#include "agent/session_stream.h"
#include "agent/wal/wal.h"
#include "apollo/v1/agent.grpc.pb.h"
#include "tls/tls_files.h"

namespace apollo::agent {

struct SessionOptions {
  std::string node_id;
  // host:port of each orchestrator replica, in the order to try them (one:
  // a single center). An empty list means the default 127.0.0.1:7011.
  std::vector<std::string> orchestrators{"127.0.0.1:7011"};
  // Mutual TLS to the center with these files (LoadTlsMaterial checked
  // them); nullopt: plaintext. The center refuses the Hello unless the
  // certificate is this node's.
  std::optional<tls::TlsMaterial> tls;
  std::map<std::string, std::string> labels;
  std::vector<std::string> groups;
  std::vector<std::string> intents;           // what this agent runs
  std::vector<std::string> disabled_intents;  // built-ins turned off here (e.g. exec)
  std::string agent_version;
  Duration heartbeat_interval = std::chrono::seconds(10);
  // Cut off from the center this long, the agent turns conservative:
  // finishes what runs, starts nothing queued, takes nothing new.
  Duration autonomy_window = std::chrono::seconds(60);
  // A snapshot of the local state goes to the center this often (and on
  // every reconnect, and when the center asks).
  Duration state_sync_interval = std::chrono::seconds(300);
  Duration initial_backoff = std::chrono::milliseconds(500);
  Duration max_backoff = std::chrono::seconds(30);
  size_t max_batch = 500;  // events per EventBatch
  // How long an ACCEPTED may wait for the task's final event before it is
  // sent alone (config final_event_hold_ms). A handler that ends within it
  // (most: probes, no-ops, small changes) costs the center one event
  // message and one commit, not two; a longer task's RUNNING shows this
  // much later. Zero: every event is sent at once.
  Duration accepted_hold = std::chrono::milliseconds(2);
  // Test only: hold each session's first snapshot back this long, so a
  // test can watch the center while the agent is connected but not yet
  // reconciled (e.g. still in conservative mode). Zero in production.
  Duration test_snapshot_delay{0};
  // Test only: a pause before each received intent is handed to the
  // executor, so the agent takes work at a known, slow rate (a slow disk or
  // CPU) and the backlog stays in the center's dispatch queue. Zero in
  // production.
  Duration test_intent_delay{0};
  // Fault injection for tests (tests/chaos): every event batch is written
  // again ~300 ms later, as by a network that redelivers. Late enough that
  // the first copy is stored by then, so what stops the second is the
  // store's dedup (a copy that arrives while the first is still on its way
  // is dropped by the bus before it). Off in production.
  bool test_duplicate_delivery = false;
  // Where the session reports what an operator should know (mode changes,
  // reconnects). Null: silent.
  std::function<void(const std::string&)> log;
  // True: this session's channel gets a subchannel pool of its own, so it
  // opens its own TCP connection even when other Sessions of the same
  // process dial the same center (gRPC otherwise shares one connection
  // between channels with equal target and arguments). An edge agent has
  // one Session, so it changes nothing there; the benchmark's simulated
  // fleet sets it to cost the center what real agents cost.
  bool own_connection = false;
  // Shared by many Sessions of one process (see session_monitor.h); must
  // outlive this Session. Null: the session runs a monitor of its own.
  SessionMonitor* monitor = nullptr;
};

class Session final : public EventSink {
 public:
  // `executor` is set with SetExecutor before Start (they refer to each other).
  Session(SessionOptions options, wal::Wal& wal, const Clock& clock);
  ~Session() override;

  void SetExecutor(Executor* executor) { executor_ = executor; }
  void Start();
  void Stop();

  bool connected() const { return connected_.load(); }
  // True once the center acknowledged this session's backlog and snapshot.
  bool synced() const { return synced_.load(); }
  uint64_t sessions_started() const { return sessions_.load(); }

  // EventSink: queues the event for the live stream (dropped while
  // disconnected: it stays in the WAL and is resent on reconnect).
  void OnDurableEvent(const Event& event) override;
  void OnDurableEvents(const std::vector<Event>& events) override;

 private:
  // How one RunSession ended: what Loop needs to choose the next address.
  struct SessionEnd {
    bool accepted = false;    // the center took the Hello: a session ran
    bool not_leader = false;  // refused by a replica that is not the leader
    std::string leader;       // the leader it named (host:port); "" if none known
    bool come_back = false;   // admission control: the same address, later
  };

  void Loop();
  // One session with the replica at `address`; returns when the stream ends.
  SessionEnd RunSession(apollo::v1::AgentGateway::Stub& stub, const std::string& address);
  // Writes events, snapshots and heartbeats (every heartbeat_us_) until
  // stopped.
  void WriterLoop(SessionStream* stream, Duration sync_interval);
  // The center named this heartbeat interval (ms; <= 0: keep the current).
  void SetHeartbeatPace(int64_t interval_ms);
  // A snapshot is due and not held back by test_snapshot_delay.
  bool SnapshotReady() const;
  void Handle(const apollo::v1::CenterMessage& msg);
  // The messages handled on gRPC's thread as they arrive (SessionStream):
  // acks and other bookkeeping that never blocks. False for the rest.
  bool HandleInline(const apollo::v1::CenterMessage& msg);
  void Enqueue(apollo::v1::AgentMessage msg);
  apollo::v1::AgentMessage BuildSnapshot() const;
  // Leaves conservative mode once backlog and snapshot are acknowledged.
  void MaybeSynced();
  // Turns conservative when cut off past the autonomy window (called by
  // the monitor every 500 ms, never after Stop() returned).
  friend class SessionMonitor;
  void CheckCutOff();
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }
  // Logs why a session could not start when it is worth an operator's
  // attention (the center refused this agent; a TLS link failed), once per
  // distinct reason; a refusal also backs off to max_backoff.
  void NoteFailedStart(const grpc::Status& status, const std::string& address);
  // Logs a follower's refusal: "replica X is not the leader; trying Y".
  void NoteNotLeader(const std::string& refused, const std::string& leader, bool listed,
                     const std::string& next, bool soon);
  // Waits up to `d` unless Stop() is called; returns false if stopping.
  bool SleepFor(Duration d);
  apollo::v1::AgentMessage Heartbeat() const;

  const SessionOptions options_;
  wal::Wal& wal_;
  const Clock& clock_;
  Executor* executor_ = nullptr;

  std::atomic<bool> connected_{false};
  std::atomic<bool> synced_{false};
  std::atomic<bool> snapshot_due_{false};
  std::atomic<int64_t> snapshot_not_before_us_{0};  // test_snapshot_delay
  std::atomic<bool> snapshot_acked_{false};
  std::atomic<uint64_t> backlog_target_{0};       // last seq when the session began
  std::atomic<int64_t> last_contact_us_{0};       // connected, or last disconnect
  std::atomic<int64_t> heartbeat_us_{0};          // this session's pace (the center's, if named)
  std::atomic<int64_t> retry_after_ms_{0};        // the center's admission control
  std::atomic<uint64_t> sessions_{0};
  std::string last_failure_;  // the session thread only: NoteFailedStart's last line

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                           // guarded by mu_
  bool writer_stop_ = false;                    // guarded by mu_
  std::deque<apollo::v1::AgentMessage> out_;    // guarded by mu_
  std::vector<Event> pending_events_;           // guarded by mu_
  // The writer sends pending_events_ at once when any of them is more than
  // an ACCEPTED (`events_urgent_`); an ACCEPTED alone waits until
  // `held_since_` + options_.accepted_hold (steady time: tests' fake clocks stand
  // still), so a short task's ACCEPTED and final event reach the center in
  // one message (one commit there, not two).
  bool events_urgent_ = false;                          // guarded by mu_
  std::chrono::steady_clock::time_point held_since_{};  // guarded by mu_
  std::unique_ptr<grpc::ClientContext> context_;  // guarded by mu_: to cancel on Stop

  std::unique_ptr<SessionMonitor> own_monitor_;  // when options_.monitor is null
  SessionMonitor* monitor_ = nullptr;            // set by Start
  std::thread thread_;
};

}  // namespace apollo::agent
