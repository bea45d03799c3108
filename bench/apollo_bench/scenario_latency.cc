// Scenario 3: sequential tasks to one agent, submit -> SUCCEEDED (as an
// operator watching the task sees it: WatchTask, sent by the center once
// the SUCCEEDED is committed; or, with --poll-us, polling GetTask) and
// submit -> RUNNING (the store's history timestamp of the DISPATCHED ->
// RUNNING transition).
#include <fstream>
#include <thread>

#include "apollo_bench/scenario_env.h"

namespace apollo::bench {
namespace {

using Steady = std::chrono::steady_clock;

double Millis(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
double MillisSince(TimePoint from, int64_t at_us) {
  return static_cast<double>(at_us - ToUnixMicros(from)) / 1000;
}

struct Sample {
  double submit_rpc_ms = 0;
  double succeeded_ms = 0;        // seen by WatchTask (or GetTask)
  double running_store_ms = -1;   // history timestamp
  double succeeded_store_ms = -1;  // history timestamp
  double accepted_agent_ms = -1;  // ACCEPTED durable in the agent's WAL
};

Result<Sample> RunOne(ScenarioEnv& env, SimAgent& agent, size_t i, Duration timeout) {
  const std::string task_id = env.prefix() + "-t" + std::to_string(i);
  apollo::v1::SubmitTasksRequest req =
      NoopTasks(env.config(), env.prefix(), i, {agent.node_id()}, "latency.yaml");
  Sample s;
  TimePoint wall = env.clock().Now();
  auto start = Steady::now();
  auto sub = env.api().Submit(req);
  if (!sub.ok()) return sub.status();
  s.submit_rpc_ms = Millis(Steady::now() - start);
  auto deadline = start + timeout;
  if (env.config().poll_us <= 0) {
    auto t = env.api().WatchUntilSettled(task_id,
                                         std::chrono::duration_cast<std::chrono::seconds>(timeout));
    if (!t.ok()) return t.status();
    if (t->status() != "SUCCEEDED")
      return Status::Aborted("task " + task_id + " ended " + t->status());
  }
  while (env.config().poll_us > 0) {
    auto t = env.api().GetTask(task_id);
    if (!t.ok()) return t.status();
    if (t->status() == "SUCCEEDED") break;
    if (t->status() == "FAILED" || t->status() == "CANCELLED" || t->status() == "TIMEOUT") {
      return Status::Aborted("task " + task_id + " ended " + t->status());
    }
    if (Steady::now() > deadline) return Status::DeadlineExceeded("task " + task_id);
    std::this_thread::sleep_for(std::chrono::microseconds(env.config().poll_us));
  }
  s.succeeded_ms = Millis(Steady::now() - start);
  // Outside the timed window: where the time went.
  auto history = env.api().History(task_id);
  if (history.ok()) {
    for (const auto& h : *history) {
      if (h.to_status() == "RUNNING" && s.running_store_ms < 0) {
        s.running_store_ms = MillisSince(wall, h.at_us());
      }
      if (h.to_status() == "SUCCEEDED") s.succeeded_store_ms = MillisSince(wall, h.at_us());
    }
  }
  if (auto times = agent.sink().Times(task_id)) {
    s.accepted_agent_ms = MillisSince(wall, ToUnixMicros(times->accepted));
  }
  return s;
}

void AddPercentiles(ScenarioResult& r, const std::string& name, std::vector<double> v) {
  std::erase_if(v, [](double x) { return x < 0; });
  if (v.empty()) return;
  r.extra[name + "_p50_ms"] = Percentile(v, 50);
  r.extra[name + "_p99_ms"] = Percentile(v, 99);
}

}  // namespace

ScenarioResult RunLatency(const BenchConfig& config, size_t connected_agents) {
  ScenarioResult r;
  r.scenario = "latency_" + std::to_string(connected_agents) + "_agents";
  auto env = ScenarioEnv::Create(config, "lat" + std::to_string(connected_agents));
  if (!env.ok()) return Failed(std::move(r), env.status().ToString());
  auto fleet = (*env)->StartConnectedFleet(std::max<size_t>(1, connected_agents));
  if (!fleet.ok()) return Failed(std::move(r), fleet.status().ToString());
  SimAgent& agent = (*fleet)->agent(0);
  agent.sink().SetTrack(true);

  std::vector<double> rpc, succeeded, running, succeeded_store, accepted;
  size_t total = config.latency_warmup + config.latency_tasks;
  for (size_t i = 0; i < total; ++i) {
    auto s = RunOne(**env, agent, i, config.timeout);
    if (!s.ok()) return Failed(std::move(r), s.status().ToString());
    if (i < config.latency_warmup) continue;
    rpc.push_back(s->submit_rpc_ms);
    succeeded.push_back(s->succeeded_ms);
    running.push_back(s->running_store_ms);
    succeeded_store.push_back(s->succeeded_store_ms);
    accepted.push_back(s->accepted_agent_ms);
  }
  if (!config.latency_csv.empty()) {
    std::ofstream csv(config.latency_csv);
    csv << "submit_rpc_ms,accepted_at_agent_ms,succeeded_in_store_ms,succeeded_seen_ms\n";
    for (size_t i = 0; i < succeeded.size(); ++i) {
      csv << rpc[i] << ',' << accepted[i] << ',' << succeeded_store[i] << ',' << succeeded[i]
          << '\n';
    }
    if (!csv) return Failed(std::move(r), "cannot write " + config.latency_csv);
  }
  r.p50_ms = Percentile(succeeded, 50);
  r.p99_ms = Percentile(succeeded, 99);
  r.rss_mb = (*env)->RssMb();
  r.extra["tasks"] = config.latency_tasks;
  r.extra["connected_agents"] = (*fleet)->size();
  r.extra["seen_by"] = config.poll_us > 0
                           ? "GetTask every " + std::to_string(config.poll_us) + " us"
                           : std::string("WatchTask");
  r.extra["submit"] = config.submit_yaml ? "yaml" : "typed";
  AddPercentiles(r, "submit_to_running", running);
  AddPercentiles(r, "submit_rpc", rpc);
  AddPercentiles(r, "accepted_at_agent", accepted);
  AddPercentiles(r, "succeeded_in_store", succeeded_store);
  return r;
}

}  // namespace apollo::bench
