#pragma once

// The agent's link to the center: dials the orchestrator (agents always
// dial out, so nodes behind NAT work), keeps one AgentGateway.Connect
// stream open, and reconnects by itself with exponential backoff and full
// jitter so 500 agents do not stampede a center that comes back.
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
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/event_sink.h"
#include "agent/executor.h"
#include "agent/wal/wal.h"
#include "apollo/v1/agent.grpc.pb.h"

namespace apollo::agent {

struct SessionOptions {
  std::string node_id;
  std::string orchestrator = "127.0.0.1:7011";
  std::map<std::string, std::string> labels;
  std::vector<std::string> groups;
  std::vector<std::string> intents;
  std::string agent_version;
  Duration heartbeat_interval = std::chrono::seconds(10);
  Duration initial_backoff = std::chrono::milliseconds(500);
  Duration max_backoff = std::chrono::seconds(30);
  size_t max_batch = 500;  // events per EventBatch
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
  uint64_t sessions_started() const { return sessions_.load(); }

  // EventSink: queues the event for the live stream (dropped while
  // disconnected: it stays in the WAL and is resent on reconnect).
  void OnDurableEvent(const Event& event) override;

 private:
  using Stream = grpc::ClientReaderWriter<apollo::v1::AgentMessage, apollo::v1::CenterMessage>;

  void Loop();
  // One connected session; returns when the stream ends.
  void RunSession(apollo::v1::AgentGateway::Stub& stub);
  void WriterLoop(Stream* stream);
  void Handle(const apollo::v1::CenterMessage& msg);
  void Enqueue(apollo::v1::AgentMessage msg);
  // Waits up to `d` unless Stop() is called; returns false if stopping.
  bool SleepFor(Duration d);
  apollo::v1::AgentMessage Heartbeat() const;

  const SessionOptions options_;
  wal::Wal& wal_;
  const Clock& clock_;
  Executor* executor_ = nullptr;

  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> sessions_{0};

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                           // guarded by mu_
  bool writer_stop_ = false;                    // guarded by mu_
  std::deque<apollo::v1::AgentMessage> out_;    // guarded by mu_
  std::vector<Event> pending_events_;           // guarded by mu_
  std::unique_ptr<grpc::ClientContext> context_;  // guarded by mu_: to cancel on Stop

  std::thread thread_;
};

}  // namespace apollo::agent
