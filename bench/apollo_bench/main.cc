// apollo-bench: Apollo-11 end to end, at fleet scale (issue 9). Starts a
// real bin/orchestrator (or uses --server) and runs simulated agents — the
// real agent library, many per process — through six scenarios. Each
// prints one JSON line; a table follows at the end.
//
//   apollo-bench                       # every scenario, defaults of issue 9
//   apollo-bench --scenarios throughput,latency --tasks 20000
//   apollo-bench --store postgresql://apollo@127.0.0.1:5432/bench
//
// Exit code: 0 if every scenario completed, 1 otherwise, 2 on bad flags.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "apollo_bench/fleet_child.h"
#include "apollo_bench/scenario_env.h"
#include "core/grpc_process.h"
#include "core/log.h"

namespace {

using apollo::bench::BenchConfig;
using apollo::bench::ScenarioResult;

// Thousands of threads and connections: lift the fd limit (as root, the
// hard one too, to kernel's fs.nr_open or 1 Mi; else the soft one to the
// hard one; the orchestrators we start inherit it) and give new threads
// 1 MiB stacks instead of 8 (address space, not memory, but it keeps the
// mapping count down).
void PrepareProcess() {
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    rlim_t want = 1 << 20;
    if (std::ifstream nr_open("/proc/sys/fs/nr_open"); nr_open) {
      rlim_t v = 0;
      if (nr_open >> v && v > 0) want = std::min(want, v);
    }
    rlimit raised{want, want};
    if (nofile.rlim_max >= want || setrlimit(RLIMIT_NOFILE, &raised) != 0) {
      nofile.rlim_cur = nofile.rlim_max;
      setrlimit(RLIMIT_NOFILE, &nofile);
    }
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_setattr_default_np(&attr);
  pthread_attr_destroy(&attr);
  signal(SIGPIPE, SIG_IGN);
}

std::string DefaultOrchestratorBin() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "bin/orchestrator" : (self.parent_path() / "orchestrator").string();
}

std::string RunId() {
  std::random_device rd;
  std::ostringstream out;
  out << "b" << std::hex << (rd() & 0xffffff);
  return out.str();
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  apollo::ApplyGrpcProcessSettings();
  // The simulated agents run the agent's executor in this process: its
  // per-task log lines would be 2 lines per task here. Warnings and worse only.
  apollo::log::Init("apollo-bench", apollo::log::Format::kText, "", apollo::log::Level::kWarning);
  // SIGINT/SIGTERM: a watcher thread kills the orchestrators we started
  // (by PID), removes our temp dirs and exits; blocked before any other
  // thread exists.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  PrepareProcess();

  CLI::App app{"apollo-bench: Apollo-11 end to end with simulated agents"};
  BenchConfig c;
  c.orchestrator_bin = DefaultOrchestratorBin();
  std::string scenarios = "throughput,latency,fanout,idle,reconnect,recovery";
  std::string latency_agents = "1,100";
  int timeout_s = 300;
  bool pg = false;
  app.add_option("--scenarios", scenarios,
                 "comma-separated: throughput, latency, fanout, idle, reconnect, recovery, soak "
                 "(soak: not in the default list; make bench-retention)")
      ->capture_default_str();
  app.add_option("--server", c.server, "use this orchestrator (host:port) instead of starting one");
  app.add_option("--orchestrator-bin", c.orchestrator_bin, "bin/orchestrator to start")
      ->capture_default_str();
  app.add_option("--store", c.store_url,
                 "store URL for the orchestrators we start (default: a fresh SQLite file, "
                 "synchronous=FULL, per scenario)");
  app.add_option("--orchestrator-config", c.orchestrator_config,
                 "config file for the orchestrators we start (--listen and --store still win)");
  app.add_flag("--pg", pg,
               "start a throwaway PostgreSQL 15 server (stock durable settings) and give each "
               "scenario a fresh database on it");
  app.add_option("--tmp-dir", c.tmp_parent, "parent of the temp dirs (WALs, store)")
      ->capture_default_str();
  app.add_option("--tasks", c.tasks, "throughput: tasks")->capture_default_str();
  app.add_option("--batch", c.batch, "tasks per SubmitTasks call")->capture_default_str();
  app.add_option("--submitters", c.submitters, "SubmitTasks calls in flight")->capture_default_str();
  app.add_option("--agents", c.throughput_agents, "throughput: agents")->capture_default_str();
  app.add_option("--latency-tasks", c.latency_tasks, "latency: sequential tasks")
      ->capture_default_str();
  app.add_option("--latency-agents", latency_agents,
                 "latency: connected agents, one run per entry (tasks go to one of them)")
      ->capture_default_str();
  app.add_option("--latency-csv", c.latency_csv,
                 "latency: write each counted task's stage times (ms from submit) to this CSV "
                 "file, to see where a slow task's time went");
  app.add_option("--poll-us", c.poll_us,
                 "latency: see SUCCEEDED by polling GetTask this often (0: WatchTask, which the "
                 "center answers as it commits)")
      ->capture_default_str();
  app.add_flag("--submit-yaml", c.submit_yaml,
               "throughput, latency, soak: submit task files' YAML text instead of typed specs "
               "(issue 18), to compare the two");
  app.add_option("--fleet", c.fleet_agents, "fanout/idle/reconnect: agents")->capture_default_str();
  app.add_flag("--shared-connection", c.shared_connection,
               "fanout/idle/reconnect/...: all simulated agents on one HTTP/2 connection (as "
               "before issue 18) instead of one TCP connection per agent");
  app.add_option("--fleet-per-process", c.fleet_per_process,
                 "idle/reconnect: at most this many agents per bench process, the rest in child "
                 "processes (0: from RLIMIT_NOFILE); to test the split")
      ->group("");
  // A child of a fleet spread over processes (split_fleet.h) runs only that.
  bool fleet_child = false;
  apollo::bench::FleetOptions slice;
  apollo::bench::AddFleetChildOptions(app, &fleet_child, &slice);
  app.add_option("--idle-seconds", c.idle_seconds, "idle: measuring window")->capture_default_str();
  app.add_option("--backlog", c.backlog_events, "recovery: WAL backlog events")->capture_default_str();
  app.add_option("--max-concurrency", c.max_concurrency, "executor workers per agent")
      ->capture_default_str();
  app.add_option("--soak-seconds", c.soak_seconds, "soak: steady-rate phase, seconds")
      ->capture_default_str();
  app.add_option("--soak-rate", c.soak_rate, "soak: tasks submitted per second")
      ->capture_default_str();
  app.add_option("--soak-agents", c.soak_agents, "soak: agents")->capture_default_str();
  app.add_option("--soak-burst", c.soak_burst, "soak: tasks of each throughput burst")
      ->capture_default_str();
  app.add_option("--timeout", timeout_s, "seconds any one wait may take")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (fleet_child) return apollo::bench::RunFleetChild(slice);
  c.timeout = std::chrono::seconds(timeout_s);
  c.run_id = RunId();
  apollo::bench::ChildPids children;
  c.children = &children;

  std::thread([&children, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::cerr << "apollo-bench: interrupted; killing the orchestrators it started and "
                 "removing its temp dirs\n";
    children.KillAll();  // agents may still write into the dirs: removal is best effort
    _exit(130);
  }).detach();

  std::unique_ptr<apollo::store::testing::PgServer> pg_server;
  if (pg) {
    apollo::store::testing::PgServer::Options o;
    o.durable = true;
    auto server = apollo::store::testing::PgServer::Start(o);
    if (!server.ok()) {
      std::cerr << "apollo-bench: cannot start PostgreSQL: " << server.status().message() << "\n";
      return 1;
    }
    pg_server = std::move(*server);
    c.pg = pg_server.get();
  }

  std::vector<ScenarioResult> results;
  auto record = [&](ScenarioResult r) {
    std::cout << apollo::bench::ToJsonLine(r) << std::endl;
    results.push_back(std::move(r));
  };
  for (const auto& s : Split(scenarios)) {
    std::cerr << "apollo-bench: scenario " << s << "\n";
    if (s == "throughput") {
      record(apollo::bench::RunThroughput(c));
    } else if (s == "latency") {
      for (const auto& n : Split(latency_agents)) record(apollo::bench::RunLatency(c, std::stoul(n)));
    } else if (s == "fanout") {
      record(apollo::bench::RunFanout(c));
    } else if (s == "idle") {
      record(apollo::bench::RunIdleFleet(c));
    } else if (s == "reconnect") {
      record(apollo::bench::RunReconnectStorm(c));
    } else if (s == "recovery") {
      record(apollo::bench::RunRecovery(c));
    } else if (s == "soak") {
      record(apollo::bench::RunSoak(c));
    } else {
      std::cerr << "apollo-bench: unknown scenario '" << s << "'\n";
      return 2;
    }
  }
  std::cout << "\n";
  apollo::bench::PrintTable(results, std::cout);
  for (const auto& r : results) {
    if (!r.error.empty()) return 1;
  }
  return 0;
}
