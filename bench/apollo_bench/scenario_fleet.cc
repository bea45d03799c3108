// Scenarios 4 (idle fleet), 5 (reconnect storm) and 6 (WAL backlog recovery).
#include <algorithm>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "apollo_bench/scenario_env.h"

namespace apollo::bench {
namespace {

using Steady = std::chrono::steady_clock;

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

struct Backlog {
  std::string node_id;
  uint64_t events = 0;  // unacknowledged events in its WAL
};

}  // namespace

ScenarioResult RunIdleFleet(const BenchConfig& config) {
  ScenarioResult r;
  r.scenario = "idle_fleet";
  auto env = ScenarioEnv::Create(config, "idle", {.orchestrator_own_session = true});
  if (!env.ok()) return Failed(std::move(r), env.status().ToString());
  OrchestratorProcess* p = (*env)->process();
  if (!p) return Failed(std::move(r), "needs an orchestrator of its own (not --server)");
  auto rss_before = (*env)->RssMb();
  auto fleet = (*env)->StartSplitFleet(config.fleet_agents);
  if (!fleet.ok()) return Failed(std::move(r), fleet.status().ToString());
  // Let connection set-up work drain, then watch a quiet fleet heartbeat.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  auto cpu0 = ProcessCpuSeconds(p->pid());
  auto t0 = Steady::now();
  std::this_thread::sleep_for(std::chrono::seconds(config.idle_seconds));
  auto cpu1 = ProcessCpuSeconds(p->pid());
  double wall = Seconds(Steady::now() - t0);
  auto rss_after = (*env)->RssMb();
  if (!cpu0 || !cpu1 || !rss_before || !rss_after) {
    return Failed(std::move(r), "cannot read /proc of the orchestrator");
  }
  r.rss_mb = rss_after;
  r.extra["agents"] = (*fleet)->size();
  r.extra["seconds"] = wall;
  r.extra["cpu_pct_of_one_core"] = (*cpu1 - *cpu0) / wall * 100;
  r.extra["rss_before_mb"] = *rss_before;
  r.extra["rss_per_agent_kib"] = (*rss_after - *rss_before) * 1024 / static_cast<double>((*fleet)->size());
  if (auto threads = ProcessThreads(p->pid())) r.extra["orchestrator_threads"] = *threads;
  // One socket per agent when each has its own connection.
  if (auto fds = ProcessOpenFiles(p->pid())) r.extra["orchestrator_fds"] = *fds;
  r.extra["connection"] = config.shared_connection ? "shared" : "per_agent";
  // Every bench process: threads summed, the most open files of any one.
  auto counts = (*fleet)->Counts();
  if (!counts.ok()) return Failed(std::move(r), counts.status().ToString());
  r.extra["bench_processes"] = counts->processes;
  r.extra["bench_threads"] = counts->threads;
  r.extra["bench_max_fds"] = counts->max_fds;
  r.extra["connected_at_end"] = counts->connected;
  return r;
}

ScenarioResult RunReconnectStorm(const BenchConfig& config) {
  ScenarioResult r;
  r.scenario = "reconnect_storm";
  auto env = ScenarioEnv::Create(config, "storm", {.orchestrator_own_session = true});
  if (!env.ok()) return Failed(std::move(r), env.status().ToString());
  if (!(*env)->process()) return Failed(std::move(r), "needs an orchestrator of its own");
  auto fleet = (*env)->StartSplitFleet(config.fleet_agents);
  if (!fleet.ok()) return Failed(std::move(r), fleet.status().ToString());
  // Reconciled (FleetCounts): a session newer than the one the kill ended,
  // whose backlog and snapshot the center acknowledged.
  auto marked = (*fleet)->Mark();
  if (!marked.ok()) return Failed(std::move(r), marked.status().ToString());
  const uint64_t sessions_before = *marked;

  auto killed = Steady::now();
  (*env)->KillOrchestrator();
  Status s = (*env)->RestartOrchestrator();
  if (!s.ok()) return Failed(std::move(r), s.ToString());
  auto listening = Steady::now();
  auto deadline = listening + config.timeout;
  size_t center = 0, synced = 0;
  std::optional<Steady::time_point> all_connected, all_synced;
  // (time, reconciled count) every 100 ms: the peak rate over any 1 s.
  std::vector<std::pair<Steady::time_point, size_t>> samples;
  while (Steady::now() < deadline) {
    if (!all_connected) {
      auto n = (*env)->api().ConnectedNodes((*env)->prefix() + "-");
      if (n.ok()) center = *n;
      if (center >= config.fleet_agents) all_connected = Steady::now();
    }
    auto counts = (*fleet)->Counts();
    if (!counts.ok()) return Failed(std::move(r), counts.status().ToString());
    synced = counts->reconciled;
    samples.emplace_back(Steady::now(), synced);
    if (!all_synced && synced >= config.fleet_agents) all_synced = Steady::now();
    if (all_connected && all_synced) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Over the shortest span of at least 1 s from each sample, per second: the
  // samples are 100 ms apart only while the fleet answers its count quickly
  // (under the storm one count can take longer than a second).
  double peak = 0;
  for (size_t i = 0, j = 0; i < samples.size(); ++i) {
    j = std::max(j, i);
    while (j < samples.size() && samples[j].first - samples[i].first < std::chrono::seconds(1)) ++j;
    if (j == samples.size()) break;
    const double span = Seconds(samples[j].first - samples[i].first);
    peak = std::max(
        peak,
        (static_cast<double>(samples[j].second) - static_cast<double>(samples[i].second)) / span);
  }
  auto end = all_connected.value_or(Steady::now());
  auto after = (*fleet)->Counts();
  if (!after.ok()) return Failed(std::move(r), after.status().ToString());
  const uint64_t sessions_after = after->sessions;
  r.rss_mb = (*env)->RssMb();
  r.extra["agents"] = (*fleet)->size();
  r.extra["bench_processes"] = (*fleet)->processes();
  r.extra["connected"] = center;
  r.extra["seconds_from_kill"] = Seconds(end - killed);
  r.extra["seconds_from_listening"] = Seconds(end - listening);
  r.extra["restart_s"] = Seconds(listening - killed);
  r.extra["reconciled"] = synced;
  if (all_synced) r.extra["reconciled_s_from_kill"] = Seconds(*all_synced - killed);
  r.extra["peak_reconciled_per_s"] = peak;
  // Where the time went: agents reconciled by each 5 s from the kill.
  nlohmann::ordered_json by5 = nlohmann::ordered_json::array();
  for (size_t i = 0, at = 5; i < samples.size(); ++i) {
    while (Seconds(samples[i].first - killed) >= static_cast<double>(at)) {
      by5.push_back(i > 0 ? samples[i - 1].second : 0);
      at += 5;
    }
  }
  r.extra["reconciled_by_5s_from_kill"] = by5;
  r.extra["connection"] = config.shared_connection ? "shared" : "per_agent";
  if (auto fds = ProcessOpenFiles((*env)->process()->pid())) r.extra["orchestrator_fds"] = *fds;
  // Sessions beyond one per agent: agents that connected and were cut again.
  r.extra["extra_sessions"] = static_cast<int64_t>(sessions_after - sessions_before) -
                              static_cast<int64_t>(config.fleet_agents);
  if (center < config.fleet_agents) r.error = "not every agent reconnected within the timeout";
  else if (synced < config.fleet_agents) r.error = "not every agent reconciled within the timeout";
  return r;
}

namespace {

// The agent runs `tasks` noop tasks but its live stream carries none of the
// events (as if the link were cut), so they sit in its WAL; then it stops.
Result<Backlog> BuildBacklog(ScenarioEnv& env, size_t tasks) {
  auto fleet = env.StartFleet(1, 4);
  if (!fleet.ok()) return fleet.status();
  SimAgent& agent = (*fleet)->agent(0);
  agent.sink().SetForward(false);
  if (!(*fleet)->WaitConnected(1, env.config().timeout)) {
    return Status::DeadlineExceeded("the backlog agent did not connect");
  }
  for (size_t first = 0; first < tasks; first += env.config().batch) {
    std::vector<std::string> nodes(std::min(env.config().batch, tasks - first), agent.node_id());
    auto sub = env.api().Submit(NoopTaskFile(env.prefix(), first, nodes), "backlog.yaml");
    if (!sub.ok()) return sub.status();
  }
  auto deadline = Steady::now() + env.config().timeout;
  while (agent.sink().succeeded() < tasks && Steady::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (agent.sink().succeeded() < tasks) return Status::DeadlineExceeded("backlog not built in time");
  // Returning destroys the fleet: the agent stops with its backlog.
  return Backlog{agent.node_id(), agent.wal().last_seq() - agent.wal().acked_seq()};
}

}  // namespace

ScenarioResult RunRecovery(const BenchConfig& config) {
  ScenarioResult r;
  r.scenario = "recovery";
  auto env = ScenarioEnv::Create(config, "rec");
  if (!env.ok()) return Failed(std::move(r), env.status().ToString());
  const size_t tasks = std::max<size_t>(1, config.backlog_events / 2);  // ACCEPTED + SUCCEEDED each
  auto built = BuildBacklog(**env, tasks);
  if (!built.ok()) return Failed(std::move(r), built.status().ToString());
  const std::string node_id = built->node_id;
  const uint64_t backlog = built->events;

  // Restart it on the same WAL and time until the center acked everything.
  auto start = Steady::now();
  SimAgentOptions o;
  o.node_id = node_id;
  o.orchestrator = (*env)->address();
  o.wal_dir = (*env)->dir() + "/" + node_id;
  o.labels = {{"role", "bench"}, {"bench_run", (*env)->prefix()}};
  auto agent = SimAgent::Open(o, (*env)->registry(), (*env)->clock());
  if (!agent.ok()) return Failed(std::move(r), agent.status().ToString());
  auto opened = Steady::now();
  uint64_t target = (*agent)->wal().last_seq();
  (*agent)->Start();
  auto deadline = start + config.timeout;
  while ((*agent)->wal().acked_seq() < target && Steady::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto end = Steady::now();
  if ((*agent)->wal().acked_seq() < target) return Failed(std::move(r), "backlog not acked in time");
  auto succeeded = (*env)->api().CountTasks("SUCCEEDED", (*env)->prefix() + "-t");
  r.rss_mb = (*env)->RssMb();
  r.extra["backlog_events"] = backlog;
  r.extra["seconds_from_restart"] = Seconds(end - start);
  r.extra["seconds_from_dial"] = Seconds(end - opened);
  r.extra["events_per_s"] = static_cast<double>(backlog) / Seconds(end - opened);
  r.extra["wal_recovery_s"] = Seconds(opened - start);
  if (succeeded.ok()) r.extra["store_succeeded"] = *succeeded;
  if (succeeded.ok() && *succeeded != tasks) r.error = "the store misses SUCCEEDED tasks";
  return r;
}

}  // namespace apollo::bench
