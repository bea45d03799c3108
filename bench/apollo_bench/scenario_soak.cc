// Scenario 7 (retention soak, issue 16): a steady submit rate for a long
// time with a short retention; the store's size and row counts must level
// off, and a burst's throughput while retention purges must stay within
// 10 % of a burst's on the fresh store, before anything was old enough to
// purge.
#include <algorithm>
#include <thread>

#include "apollo_bench/db_stats.h"
#include "apollo_bench/scenario_env.h"

namespace apollo::bench {
namespace {

using Steady = std::chrono::steady_clock;

double Seconds(Steady::duration d) { return std::chrono::duration<double>(d).count(); }

uint64_t Succeeded(Fleet& f) {
  uint64_t n = 0;
  for (size_t i = 0; i < f.size(); ++i) n += f.agent(i).sink().succeeded();
  return n;
}

bool AllAcked(Fleet& f) {
  for (size_t i = 0; i < f.size(); ++i) {
    if (!f.agent(i).SucceededAcked()) return false;
  }
  return true;
}

// `count` noop tasks from id `*next`, spread over the fleet, in requests of 500.
std::vector<apollo::v1::SubmitTasksRequest> Files(const BenchConfig& config,
                                                  const std::string& prefix, Fleet& f, size_t count,
                                                  size_t* next) {
  std::vector<apollo::v1::SubmitTasksRequest> files;
  for (size_t done = 0; done < count;) {
    size_t n = std::min<size_t>(500, count - done);
    std::vector<std::string> nodes;
    for (size_t i = 0; i < n; ++i) nodes.push_back(f.agent((*next + i) % f.size()).node_id());
    files.push_back(NoopTasks(config, prefix, *next, nodes, "soak.yaml"));
    *next += n;
    done += n;
  }
  return files;
}

// A burst of `count` tasks as fast as the center takes them: tasks/s from
// the first submit to the last SUCCEEDED committed.
Result<double> Burst(ScenarioEnv& env, Fleet& f, size_t count, size_t* next,
                     Steady::time_point deadline) {
  const uint64_t before = Succeeded(f);
  auto files = Files(env.config(), env.prefix(), f, count, next);
  auto start = Steady::now();
  Status s = SubmitAll(env.api(), files, /*submitters=*/2, deadline, nullptr, nullptr);
  if (!s.ok()) return s;
  while (Steady::now() < deadline) {
    if (Succeeded(f) >= before + count && AllAcked(f)) {
      return static_cast<double>(count) / Seconds(Steady::now() - start);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return Status::DeadlineExceeded("burst did not finish in time");
}

nlohmann::ordered_json StatsJson(double t, const DbStats& s, double completed_per_s) {
  nlohmann::ordered_json j{{"t_s", t},
                           {"db_mb", static_cast<double>(s.bytes) / (1 << 20)},
                           {"completed_per_s", completed_per_s}};
  for (const auto& [table, n] : s.rows) j[table] = n;
  return j;
}

}  // namespace

ScenarioResult RunSoak(const BenchConfig& given) {
  ScenarioResult r;
  r.scenario = "soak";
  BenchConfig config = given;  // outlives env (ScenarioEnv keeps a reference)
  auto env = ScenarioEnv::Create(config, "soak");
  if (!env.ok()) return Failed(std::move(r), env.status().ToString());
  ScenarioEnv& e = **env;
  if (e.store_url().empty()) return Failed(std::move(r), "soak needs its own orchestrator");
  auto fleet = e.StartConnectedFleet(config.soak_agents);
  if (!fleet.ok()) return Failed(std::move(r), fleet.status().ToString());
  Fleet& f = **fleet;
  const auto deadline =
      Steady::now() + std::chrono::seconds(config.soak_seconds) + config.timeout * 3;
  size_t next = 0;

  // 1. A burst on the fresh store: nothing is old enough to purge yet.
  auto fresh = Burst(e, f, config.soak_burst, &next, deadline);
  if (!fresh.ok()) return Failed(std::move(r), "fresh burst: " + fresh.status().ToString());

  // 2. The steady rate: every 100 ms a tenth of a second's tasks.
  const size_t per_tick = std::max<size_t>(1, config.soak_rate / 10);
  const auto start = Steady::now();
  const auto end = start + std::chrono::seconds(config.soak_seconds);
  auto next_sample = start + std::chrono::seconds(config.soak_sample_seconds);
  uint64_t sampled_succeeded = Succeeded(f);
  auto sampled_at = start;
  nlohmann::ordered_json samples = nlohmann::ordered_json::array();
  std::vector<double> mb;
  size_t submitted = 0;
  for (auto tick = start; tick < end; tick += std::chrono::milliseconds(100)) {
    std::this_thread::sleep_until(tick);
    Status s = SubmitAll(e.api(), Files(config, e.prefix(), f, per_tick, &next), 1, deadline,
                         nullptr, nullptr);
    if (!s.ok()) return Failed(std::move(r), "steady submit: " + s.ToString());
    submitted += per_tick;
    if (Steady::now() >= next_sample) {
      auto stats = ReadDbStats(e.store_url());
      if (!stats.ok()) return Failed(std::move(r), "db stats: " + stats.status().ToString());
      uint64_t done = Succeeded(f);
      auto now = Steady::now();
      double rate = static_cast<double>(done - sampled_succeeded) / Seconds(now - sampled_at);
      sampled_succeeded = done;
      sampled_at = now;
      samples.push_back(StatsJson(Seconds(now - start), *stats, rate));
      mb.push_back(static_cast<double>(stats->bytes) / (1 << 20));
      std::cerr << "apollo-bench: soak " << samples.back().dump() << "\n";
      next_sample += std::chrono::seconds(config.soak_sample_seconds);
    }
  }
  const double steady_s = Seconds(Steady::now() - start);

  // 3. The same burst while retention purges what the steady rate left.
  auto purging = Burst(e, f, config.soak_burst, &next, deadline);
  if (!purging.ok()) return Failed(std::move(r), "purging burst: " + purging.status().ToString());
  auto final_stats = ReadDbStats(e.store_url());

  // Level: the largest size in the last third against the largest in the
  // middle third (1.0: flat; well above: still growing).
  double growth = 0;
  if (mb.size() >= 3) {
    size_t third = mb.size() / 3;
    double mid = *std::max_element(mb.begin() + third, mb.begin() + 2 * third);
    double last = *std::max_element(mb.begin() + 2 * third, mb.end());
    growth = mid > 0 ? last / mid : 0;
  }
  r.tasks_per_s = static_cast<double>(submitted) / steady_s;
  r.rss_mb = e.RssMb();
  r.extra["agents"] = f.size();
  r.extra["offered_per_s"] = config.soak_rate;
  r.extra["steady_seconds"] = steady_s;
  r.extra["burst_tasks"] = config.soak_burst;
  r.extra["burst_fresh_per_s"] = *fresh;
  r.extra["burst_purging_per_s"] = *purging;
  r.extra["burst_ratio"] = *purging / *fresh;
  r.extra["db_growth_last_vs_middle_third"] = growth;
  if (final_stats.ok()) r.extra["final"] = StatsJson(0, *final_stats, 0);
  r.extra["samples"] = samples;
  return r;
}

}  // namespace apollo::bench
