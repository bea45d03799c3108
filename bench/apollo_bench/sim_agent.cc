#include "apollo_bench/sim_agent.h"

#include "core/version.h"

namespace apollo::bench {

void BenchSink::OnDurableEvent(const Event& event) {
  Note(event);
  if (forward_.load() && session_ != nullptr) session_->OnDurableEvent(event);
}

void BenchSink::OnDurableEvents(const std::vector<Event>& events) {
  for (const Event& e : events) Note(e);
  if (forward_.load() && session_ != nullptr) session_->OnDurableEvents(events);
}

void BenchSink::Note(const Event& event) {
  if (event.type == EventType::kSucceeded) {
    succeeded_.fetch_add(1);
    // Executor threads may report out of seq order: keep the maximum.
    uint64_t seen = last_succeeded_seq_.load();
    while (seen < event.sequence_number &&
           !last_succeeded_seq_.compare_exchange_weak(seen, event.sequence_number)) {
    }
  }
  if (track_.load()) {
    TimePoint now = clock_.Now();
    std::lock_guard<std::mutex> lock(mu_);
    TaskTimes& t = times_[event.task_id];
    if (event.type == EventType::kAccepted) t.accepted = now;
    if (event.type == EventType::kSucceeded) {
      t.succeeded = now;
      t.succeeded_seq = event.sequence_number;
    }
  }
}

std::optional<TaskTimes> BenchSink::Times(const std::string& task_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = times_.find(task_id);
  if (it == times_.end()) return std::nullopt;
  return it->second;
}

Result<std::unique_ptr<SimAgent>> SimAgent::Open(const SimAgentOptions& options,
                                                 const agent::HandlerRegistry& registry,
                                                 const Clock& clock) {
  std::unique_ptr<SimAgent> a(new SimAgent(options, clock));
  wal::WalOptions wal_options;
  wal_options.node_id = options.node_id;
  // Bench WALs are thrown away: small segments, removed as soon as acked.
  wal_options.segment_size = 4 << 20;
  wal_options.retention = Duration(0);
  auto wal = wal::Wal::Open(options.wal_dir, wal_options, clock);
  if (!wal.ok()) return wal.status().WithPrefix("WAL of " + options.node_id);
  a->wal_ = std::move(*wal);

  agent::SessionOptions so;
  so.node_id = options.node_id;
  so.orchestrators = {options.orchestrator};
  so.labels = options.labels;
  so.intents = registry.Intents();
  so.agent_version = kVersion;
  so.heartbeat_interval = options.heartbeat_interval;
  so.own_connection = !options.shared_connection;
  so.monitor = options.monitor;
  a->session_ = std::make_unique<agent::Session>(so, *a->wal_, clock);
  a->sink_.SetSession(a->session_.get());

  agent::ExecutorOptions eo;
  eo.node_id = options.node_id;
  eo.max_concurrency = options.max_concurrency;
  a->executor_ = std::make_unique<agent::Executor>(eo, *a->wal_, registry, clock, a->sink_);
  a->session_->SetExecutor(a->executor_.get());
  auto note = a->executor_->Recover();
  if (!note.ok()) return note.status().WithPrefix("recovery of " + options.node_id);
  return a;
}

SimAgent::~SimAgent() { Stop(); }

void SimAgent::Start() { session_->Start(); }

void SimAgent::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // The session first: its reader thread calls into the executor. Either
  // may be missing when Open failed half-way.
  if (session_) session_->Stop();
  if (executor_) executor_->Shutdown();
}

}  // namespace apollo::bench
