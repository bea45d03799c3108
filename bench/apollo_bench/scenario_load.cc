// Scenario 1 (throughput) and 2 (fan-out).
#include <atomic>
#include <thread>

#include "apollo_bench/scenario_env.h"

namespace apollo::bench {
namespace {

using Steady = std::chrono::steady_clock;

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }
double Millis(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

ScenarioResult RunThroughput(const BenchConfig& config) {
  ScenarioResult r;
  r.scenario = "throughput";
  auto env = ScenarioEnv::Create(config, "tp");
  if (!env.ok()) return Failed(std::move(r), env.status().ToString());
  auto fleet = (*env)->StartConnectedFleet(config.throughput_agents);
  if (!fleet.ok()) return Failed(std::move(r), fleet.status().ToString());
  Fleet& f = **fleet;

  // Task i goes to agent i % agents; requests of `batch` tasks.
  std::vector<apollo::v1::SubmitTasksRequest> requests;
  for (size_t first = 0; first < config.tasks; first += config.batch) {
    std::vector<std::string> nodes;
    for (size_t i = first; i < std::min(config.tasks, first + config.batch); ++i) {
      nodes.push_back(f.agent(i % f.size()).node_id());
    }
    requests.push_back(NoopTasks(config, (*env)->prefix(), first, nodes,
                                 "bench-batch-" + std::to_string(requests.size()) + ".yaml"));
  }

  auto start = Steady::now();
  auto deadline = start + config.timeout;
  std::vector<double> call_ms;
  size_t refused = 0;
  Status s = SubmitAll((*env)->api(), requests, config.submitters, deadline, &call_ms, &refused);
  auto submitted = Steady::now();
  if (!s.ok()) return Failed(std::move(r), s.ToString());

  // Done when every SUCCEEDED event is acknowledged by the center, which
  // acks only after its store committed.
  bool done = false;
  while (!done && Steady::now() < deadline) {
    uint64_t succeeded = 0;
    bool acked = true;
    for (size_t i = 0; i < f.size(); ++i) {
      succeeded += f.agent(i).sink().succeeded();
      acked = acked && f.agent(i).SucceededAcked();
    }
    done = succeeded >= config.tasks && acked;
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  auto end = Steady::now();
  if (!done) return Failed(std::move(r), "not all tasks SUCCEEDED within the timeout");

  r.tasks_per_s = static_cast<double>(config.tasks) / Seconds(end - start);
  r.rss_mb = (*env)->RssMb();
  r.extra["tasks"] = config.tasks;
  r.extra["agents"] = f.size();
  r.extra["batch"] = config.batch;
  r.extra["submitters"] = config.submitters;
  r.extra["submit"] = config.submit_yaml ? "yaml" : "typed";
  r.extra["seconds"] = Seconds(end - start);
  r.extra["submit_tasks_per_s"] = static_cast<double>(config.tasks) / Seconds(submitted - start);
  r.extra["submit_call_p50_ms"] = Percentile(call_ms, 50);
  r.extra["submit_call_p99_ms"] = Percentile(call_ms, 99);
  r.extra["submit_refusals"] = refused;
  auto verified = (*env)->api().CountTasks("SUCCEEDED", (*env)->prefix() + "-t");
  if (!verified.ok()) return Failed(std::move(r), verified.status().ToString());
  r.extra["store_succeeded"] = *verified;
  if (*verified != config.tasks) r.error = "the store holds fewer SUCCEEDED tasks than submitted";
  return r;
}

ScenarioResult RunFanout(const BenchConfig& config) {
  ScenarioResult r;
  r.scenario = "fanout";
  auto env = ScenarioEnv::Create(config, "fo");
  if (!env.ok()) return Failed(std::move(r), env.status().ToString());
  auto fleet_start = Steady::now();
  auto fleet = (*env)->StartConnectedFleet(config.fleet_agents);
  if (!fleet.ok()) return Failed(std::move(r), fleet.status().ToString());
  r.extra["fleet_connect_s"] = Seconds(Steady::now() - fleet_start);

  const std::string task_id = (*env)->prefix() + "-t0";
  auto start = Steady::now();
  auto deadline = start + config.timeout;
  TimePoint submitted_at = (*env)->clock().Now();
  auto sub = (*env)->api().Submit(NoopLabelTaskFile(task_id, (*env)->prefix()), "fanout.yaml");
  if (!sub.ok()) return Failed(std::move(r), sub.status().ToString());
  r.extra["submit_ms"] = Millis(Steady::now() - start);

  apollo::v1::Task task;
  bool done = false;
  while (!done && Steady::now() < deadline) {
    auto t = (*env)->api().GetTask(task_id);
    if (t.ok()) {
      task = *t;
      size_t ok = 0;
      for (const auto& n : task.nodes()) ok += n.status() == "SUCCEEDED" ? 1 : 0;
      done = ok >= config.fleet_agents;
    }
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto end = Steady::now();
  if (!done) return Failed(std::move(r), "not every node SUCCEEDED within the timeout");
  // Per node: submit -> its row's last update (SUCCEEDED) in the store.
  std::vector<double> node_ms;
  for (const auto& n : task.nodes()) {
    node_ms.push_back(static_cast<double>(n.updated_at_us() - ToUnixMicros(submitted_at)) / 1000);
  }
  r.tasks_per_s = static_cast<double>(config.fleet_agents) / Seconds(end - start);
  r.p50_ms = Percentile(node_ms, 50);
  r.p99_ms = Percentile(node_ms, 99);
  r.rss_mb = (*env)->RssMb();
  r.extra["nodes"] = task.nodes_size();
  r.extra["seconds"] = Seconds(end - start);
  return r;
}

}  // namespace apollo::bench
