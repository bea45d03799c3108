#pragma once

// One simulated edge agent inside the benchmark process: the real agent
// library wired exactly as bin/edge-agent wires it (Wal::Open ->
// Executor::Recover -> Session::Start), with its own node_id and WAL
// directory, running the built-in `noop` handler. The only addition is
// BenchSink between the executor and the session: it timestamps events as
// they become durable, and can withhold them from the live stream to build
// a WAL backlog (as a cut link would).
//
// Cost per agent (issue 18): 2 threads while connected (session loop,
// session writer) plus executor workers once it runs work (up to
// max_concurrency; none while idle); the session monitor is one thread for
// the whole fleet (SimAgentOptions::monitor), and the WAL has none. 3 file descriptors (WAL lock,
// active segment, its own TCP connection) — or 2 with shared_connection,
// where every Session of the process rides one HTTP/2 connection (gRPC's
// global subchannel pool).
//
// Thread-safety: Start/Stop from one thread; the accessors from any.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/event_sink.h"
#include "agent/executor.h"
#include "agent/handlers/registry.h"
#include "agent/session.h"
#include "agent/wal/wal.h"
#include "core/clock.h"

namespace apollo::bench {

// When a task's events became durable in this agent's WAL.
struct TaskTimes {
  TimePoint accepted{};
  TimePoint succeeded{};
  uint64_t succeeded_seq = 0;
};

class BenchSink final : public agent::EventSink {
 public:
  explicit BenchSink(const Clock& clock) : clock_(clock) {}

  // The session to forward to; set before events flow.
  void SetSession(agent::Session* session) { session_ = session; }
  // false: events stay in the WAL only, resent on the next session.
  void SetForward(bool on) { forward_.store(on); }
  // true: keep TaskTimes per task (latency scenario; memory grows).
  void SetTrack(bool on) { track_.store(on); }

  void OnDurableEvent(const Event& event) override;
  void OnDurableEvents(const std::vector<Event>& events) override;

  uint64_t succeeded() const { return succeeded_.load(); }
  uint64_t last_succeeded_seq() const { return last_succeeded_seq_.load(); }
  std::optional<TaskTimes> Times(const std::string& task_id) const;

 private:
  void Note(const Event& event);

  const Clock& clock_;
  agent::Session* session_ = nullptr;
  std::atomic<bool> forward_{true};
  std::atomic<bool> track_{false};
  std::atomic<uint64_t> succeeded_{0};
  std::atomic<uint64_t> last_succeeded_seq_{0};
  mutable std::mutex mu_;
  std::unordered_map<std::string, TaskTimes> times_;  // guarded by mu_
};

struct SimAgentOptions {
  std::string node_id;
  std::string orchestrator;  // host:port
  std::string wal_dir;
  std::map<std::string, std::string> labels;
  int max_concurrency = 1;
  Duration heartbeat_interval = std::chrono::seconds(10);
  // false: this agent's own TCP connection (agent::SessionOptions::
  // own_connection), as a real agent has; true: gRPC's shared one.
  bool shared_connection = false;
  // Shared by the fleet; must outlive the agent. Null: the session's own.
  agent::SessionMonitor* monitor = nullptr;
};

class SimAgent {
 public:
  // Opens (recovers) the WAL and builds executor and session; the session
  // does not dial until Start(). `registry` and `clock` must outlive it.
  static Result<std::unique_ptr<SimAgent>> Open(const SimAgentOptions& options,
                                                const agent::HandlerRegistry& registry,
                                                const Clock& clock);
  ~SimAgent();
  SimAgent(const SimAgent&) = delete;
  SimAgent& operator=(const SimAgent&) = delete;

  void Start();
  // Closes the session, then shuts the executor down. Idempotent.
  void Stop();

  const std::string& node_id() const { return options_.node_id; }
  bool connected() const { return session_->connected(); }
  uint64_t sessions_started() const { return session_->sessions_started(); }
  // Connected, and the center acknowledged this session's backlog and
  // snapshot (reconciled; it takes new work from here on).
  bool synced() const { return session_->synced(); }
  wal::Wal& wal() { return *wal_; }
  BenchSink& sink() { return sink_; }
  // True when the center acknowledged (= committed in its store) every
  // SUCCEEDED event this agent logged.
  bool SucceededAcked() const { return wal_->acked_seq() >= sink_.last_succeeded_seq(); }

 private:
  SimAgent(SimAgentOptions options, const Clock& clock) : options_(std::move(options)), sink_(clock) {}

  const SimAgentOptions options_;
  std::unique_ptr<wal::Wal> wal_;
  BenchSink sink_;
  std::unique_ptr<agent::Session> session_;
  std::unique_ptr<agent::Executor> executor_;
  bool stopped_ = false;
};

}  // namespace apollo::bench
