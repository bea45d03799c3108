#pragma once

// What every scenario needs: the benchmark's settings, a fresh orchestrator
// (or the one given with --server), a temp dir for agent WALs, unique
// node/task id prefixes, and the operator API client.
//
// With an orchestrator of our own each scenario gets a new process and,
// for SQLite, a new store file, so no scenario sees another's rows. With
// --server or a PostgreSQL URL the store is shared: ids and the
// `bench_run` label are unique per run and scenario, so counts stay exact.
//
// Thread-safety: not thread-safe; one scenario at a time.

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "agent/handlers/registry.h"
#include "apollo_bench/api_client.h"
#include "apollo_bench/fleet.h"
#include "apollo_bench/orchestrator_process.h"
#include "apollo_bench/report.h"
#include "apollo_bench/split_fleet.h"
#include "store/testing/pg_server.h"

namespace apollo::bench {

// What this benchmark started and must undo if it is interrupted: the PIDs
// of its orchestrators and fleet children (split_fleet.h) and its temp
// dirs, so a SIGINT handler can kill exactly those processes and remove
// exactly those dirs.
class ChildPids {
 public:
  void Add(pid_t pid);
  void Remove(pid_t pid);
  void AddDir(const std::string& dir);
  void RemoveDir(const std::string& dir);
  // SIGKILLs each recorded PID, then removes each recorded dir.
  void KillAll();

 private:
  std::mutex mu_;
  std::set<pid_t> pids_;         // guarded by mu_
  std::set<std::string> dirs_;   // guarded by mu_
};

struct BenchConfig {
  std::string server;            // non-empty: use this orchestrator
  std::string orchestrator_bin;  // else start this binary
  std::string store_url;         // empty: sqlite://<scenario temp dir>/apollo.db
  std::string orchestrator_config;  // non-empty: passed as --config
  std::string tmp_parent = "/tmp";
  std::string run_id;            // unique per run: prefixes ids and labels
  size_t tasks = 50'000;         // 1: throughput
  size_t batch = 500;            // 1: tasks per SubmitTasks call
  int submitters = 2;            // 1: SubmitTasks calls in flight
  size_t throughput_agents = 100;
  size_t latency_tasks = 1000;   // 3
  size_t latency_warmup = 10;    // 3: not counted
  int poll_us = 0;               // 3: GetTask polling interval; 0: WatchTask
  std::string latency_csv;       // 3: each task's stage times, to this file ("" = none)
  // 1, 3, 7: submit task files' YAML text instead of typed specs (issue 18),
  // to compare the two.
  bool submit_yaml = false;
  size_t fleet_agents = 1000;    // 2, 4, 5
  // 4, 5: at most this many agents per bench process (the rest in child
  // processes, split_fleet.h); 0: MaxAgentsPerProcess, from RLIMIT_NOFILE.
  size_t fleet_per_process = 0;
  // All simulated agents on one HTTP/2 connection (the bench before issue
  // 18) instead of one connection each.
  bool shared_connection = false;
  int idle_seconds = 30;         // 4
  size_t backlog_events = 10'000;  // 6
  int max_concurrency = 1;       // executor workers per simulated agent
  int soak_seconds = 600;        // 7: steady-rate phase
  size_t soak_rate = 200;        // 7: tasks submitted per second
  size_t soak_agents = 20;       // 7
  size_t soak_burst = 5000;      // 7: tasks of each throughput burst
  int soak_sample_seconds = 30;  // 7: store size and rows sampled this often
  Duration timeout = std::chrono::seconds(300);  // per scenario wait
  ChildPids* children = nullptr;
  // Set (--pg): each scenario gets a fresh database on this server.
  store::testing::PgServer* pg = nullptr;
};

struct ScenarioEnvOptions {
  // Our orchestrator in a session of its own (OrchestratorSpec::own_session),
  // for idle and reconnect, whose thousands of simulated agents share the
  // machine with it. Without: 10,000 agents reconnecting on 2 cores starved
  // the restarted orchestrator, abandoned connection attempts piled up as
  // CLOSE_WAIT sockets to its fd limit, and after EMFILE it accepted nothing.
  bool orchestrator_own_session = false;
};

class ScenarioEnv {
 public:
  static Result<std::unique_ptr<ScenarioEnv>> Create(const BenchConfig& config,
                                                     const std::string& scenario,
                                                     const ScenarioEnvOptions& options = {});
  ~ScenarioEnv();

  const BenchConfig& config() const { return config_; }
  const std::string& address() const { return address_; }
  // Our orchestrator, or nullptr with --server.
  OrchestratorProcess* process() { return process_.get(); }
  ApiClient& api() { return *api_; }
  const Clock& clock() const { return clock_; }
  // Built-in `noop` only.
  const agent::HandlerRegistry& registry() const { return *registry_; }
  const std::string& dir() const { return dir_->path(); }
  // "<run>-<scenario>": node ids are "<prefix>-<i>", task ids "<prefix>-t<i>".
  const std::string& prefix() const { return prefix_; }
  // Our orchestrator's store (empty with --server).
  const std::string& store_url() const { return store_url_; }
  std::optional<double> RssMb() const;

  // `agents` simulated agents labelled role=bench and bench_run=prefix().
  Result<std::unique_ptr<Fleet>> StartFleet(size_t agents, int max_concurrency);
  // Starts a fleet in this process and waits until the center lists all of
  // it connected. First checks that this process (CheckFleetCapacity; its
  // agents run tasks, so each starts executor threads) and our
  // orchestrator (2 fds per agent) can hold it; a fleet
  // larger than MaxAgentsPerProcess: FailedPrecondition (only
  // StartSplitFleet spreads one over processes).
  Result<std::unique_ptr<Fleet>> StartConnectedFleet(size_t agents);
  // `agents` idle agents (they will run no work) over as many processes as
  // fleet_per_process (or MaxAgentsPerProcess) asks, and waits until the
  // center lists all of them connected. Checks each process's descriptors,
  // the machine's threads and our orchestrator's descriptors first.
  Result<std::unique_ptr<SplitFleet>> StartSplitFleet(size_t agents);

  // Restarts our orchestrator after a kill (keeps the port; re-registers the PID).
  Status RestartOrchestrator();
  void KillOrchestrator();

 private:
  ScenarioEnv(const BenchConfig& config) : config_(config) {}
  FleetOptions MakeFleetOptions(size_t agents, int max_concurrency) const;
  // Whether our orchestrator may open 2 files per agent (OK with --server).
  Status CheckOrchestratorFds(size_t agents) const;
  // Polls ConnectedNodes until `agents` of ours are listed, up to the timeout.
  Status WaitCenterConnected(size_t agents);

  const BenchConfig& config_;
  RealClock clock_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<OrchestratorProcess> process_;
  std::string address_;
  std::string store_url_;
  std::string prefix_;
  std::unique_ptr<agent::HandlerRegistry> registry_;
  std::unique_ptr<ApiClient> api_;
};

// Submits every request from `submitters` threads, retrying refusals (the
// dispatch queue's watermark answers RESOURCE_EXHAUSTED) until `deadline`;
// returns the first hard error. Per-call latencies go to *call_ms, the
// refusals to *refused (either may be null).
Status SubmitAll(ApiClient& api, const std::vector<apollo::v1::SubmitTasksRequest>& requests,
                 int submitters, std::chrono::steady_clock::time_point deadline,
                 std::vector<double>* call_ms, size_t* refused);

// One noop task per entry of `nodes`, ids "<prefix>-t<first + i>", as a
// `tasks:` file.
std::string NoopTaskFile(const std::string& prefix, size_t first,
                         const std::vector<std::string>& nodes);
// The same tasks as a SubmitTasks request named `file_name`: typed specs
// built directly, or NoopTaskFile's text with config.submit_yaml.
apollo::v1::SubmitTasksRequest NoopTasks(const BenchConfig& config, const std::string& prefix,
                                         size_t first, const std::vector<std::string>& nodes,
                                         const std::string& file_name);
// One noop task on every node labelled bench_run=`label`.
std::string NoopLabelTaskFile(const std::string& task_id, const std::string& label);

// Marks `r` as not completed, for `return Failed(std::move(r), why);`.
inline ScenarioResult Failed(ScenarioResult r, std::string why) {
  r.error = std::move(why);
  return r;
}

ScenarioResult RunThroughput(const BenchConfig& config);
ScenarioResult RunFanout(const BenchConfig& config);
ScenarioResult RunLatency(const BenchConfig& config, size_t connected_agents);
ScenarioResult RunIdleFleet(const BenchConfig& config);
ScenarioResult RunReconnectStorm(const BenchConfig& config);
ScenarioResult RunRecovery(const BenchConfig& config);
ScenarioResult RunSoak(const BenchConfig& config);

}  // namespace apollo::bench
