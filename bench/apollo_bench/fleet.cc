#include "apollo_bench/fleet.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

namespace apollo::bench {
namespace {

// A number read from a /proc file, or nullopt.
std::optional<int64_t> ReadProcNumber(const std::string& path) {
  std::ifstream in(path);
  int64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

// Threads running on the machine now (the 4th field of /proc/loadavg is
// "runnable/total").
std::optional<int64_t> MachineThreads() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c, tasks;
  if (!(in >> a >> b >> c >> tasks)) return std::nullopt;
  auto slash = tasks.find('/');
  if (slash == std::string::npos) return std::nullopt;
  return std::stoll(tasks.substr(slash + 1));
}

// Threads of the process besides its agents' (gRPC pools, the session
// monitor, the stoppers of StopAll).
constexpr int64_t kThreadsPerProcess = 200;

// Threads one process runs for `agents` agents: session loop and session
// writer each, plus the executor workers (the WAL has no thread of its own:
// its appenders take turns to sync).
int64_t ProcessThreadsNeeded(size_t agents, int workers) {
  return static_cast<int64_t>(agents) * (2 + std::max(0, workers)) + kThreadsPerProcess;
}

}  // namespace

int64_t FleetFds(size_t agents, bool shared_connection) {
  return static_cast<int64_t>(agents) * (shared_connection ? 2 : 3) + 256;
}

size_t MaxAgentsPerProcess(bool shared_connection) {
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) != 0 || nofile.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  const int64_t budget = static_cast<int64_t>(nofile.rlim_cur) / 4 * 3;
  const int64_t per_agent = FleetFds(1, shared_connection) - FleetFds(0, shared_connection);
  return static_cast<size_t>(
      std::max<int64_t>(1, (budget - FleetFds(0, shared_connection)) / per_agent));
}

Status CheckProcessCapacity(size_t agents, int workers, bool shared_connection) {
  const int64_t fds = FleetFds(agents, shared_connection);
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && static_cast<int64_t>(nofile.rlim_cur) < fds) {
    return Status::FailedPrecondition(
        std::to_string(agents) + " agents need " + std::to_string(fds) +
        " file descriptors; RLIMIT_NOFILE is " + std::to_string(nofile.rlim_cur) +
        " (hard limit " + std::to_string(nofile.rlim_max) +
        "; raising it needs CAP_SYS_RESOURCE; or --shared-connection: 2 per agent)");
  }
  // Each thread stack is two mappings (the stack and its guard page).
  const int64_t threads = ProcessThreadsNeeded(agents, workers);
  auto max_maps = ReadProcNumber("/proc/sys/vm/max_map_count");
  if (max_maps && 2 * threads + 2000 > *max_maps) {
    return Status::FailedPrecondition(
        std::to_string(agents) + " agents need ~" + std::to_string(2 * threads + 2000) +
        " memory mappings (2 per thread); vm.max_map_count is " + std::to_string(*max_maps));
  }
  return Status::Ok();
}

Status CheckMachineThreads(size_t agents, size_t processes, int workers) {
  // Every process has its own fixed share (gRPC, monitor, stoppers).
  const int64_t threads =
      ProcessThreadsNeeded(agents, workers) +
      kThreadsPerProcess * (static_cast<int64_t>(std::max<size_t>(1, processes)) - 1);
  auto pid_max = ReadProcNumber("/proc/sys/kernel/pid_max");
  auto running = MachineThreads();
  if (pid_max && running && threads + *running > *pid_max) {
    return Status::FailedPrecondition(
        std::to_string(agents) + " agents in " + std::to_string(processes) + " processes need ~" +
        std::to_string(threads) + " threads; kernel.pid_max is " + std::to_string(*pid_max) +
        " and " + std::to_string(*running) + " threads already run on this machine");
  }
  return Status::Ok();
}

Status CheckFleetCapacity(size_t agents, int workers, bool shared_connection) {
  APOLLO_RETURN_IF_ERROR(CheckProcessCapacity(agents, workers, shared_connection));
  return CheckMachineThreads(agents, 1, workers);
}

Result<std::unique_ptr<Fleet>> Fleet::Start(const FleetOptions& options,
                                            const agent::HandlerRegistry& registry,
                                            const Clock& clock) {
  std::unique_ptr<Fleet> fleet(new Fleet());
  fleet->monitor_ = std::make_unique<agent::SessionMonitor>();
  fleet->agents_.reserve(options.agents);
  const auto pace_until = std::chrono::steady_clock::now() + options.start_timeout;
  for (size_t i = 0; i < options.agents; ++i) {
    if (options.max_connecting > 0) fleet->WaitConnecting(options.max_connecting, pace_until);
    SimAgentOptions o;
    o.node_id = options.node_prefix + "-" + std::to_string(options.first_index + i);
    o.orchestrator = options.orchestrator;
    o.wal_dir = options.root_dir + "/" + o.node_id;
    o.labels = options.labels;
    o.max_concurrency = options.max_concurrency;
    o.heartbeat_interval = options.heartbeat_interval;
    o.shared_connection = options.shared_connection;
    o.monitor = fleet->monitor_.get();
    auto a = SimAgent::Open(o, registry, clock);
    if (!a.ok()) return a.status().WithPrefix("agent " + std::to_string(options.first_index + i));
    (*a)->Start();
    fleet->agents_.push_back(std::move(*a));
  }
  return fleet;
}

Fleet::~Fleet() { StopAll(); }

size_t Fleet::connected() const {
  size_t n = 0;
  for (const auto& a : agents_) n += a->connected() ? 1 : 0;
  return n;
}

bool Fleet::WaitConnected(size_t n, Duration timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (connected() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return connected() >= n;
}

void Fleet::WaitConnecting(size_t below, std::chrono::steady_clock::time_point until) const {
  while (agents_.size() - connected() >= below && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

uint64_t Fleet::Mark() {
  marks_.resize(agents_.size());
  uint64_t sum = 0;
  for (size_t i = 0; i < agents_.size(); ++i) {
    marks_[i] = agents_[i]->sessions_started();
    sum += marks_[i];
  }
  return sum;
}

FleetCounts Fleet::Counts() const {
  FleetCounts c;
  c.agents = agents_.size();
  for (size_t i = 0; i < agents_.size(); ++i) {
    const SimAgent& a = *agents_[i];
    // The order RunReconnectStorm always read them in.
    const uint64_t sessions = a.sessions_started();
    const bool synced = a.synced();
    c.connected += a.connected() ? 1 : 0;
    c.synced += synced ? 1 : 0;
    c.sessions += sessions;
    if (synced && sessions > (i < marks_.size() ? marks_[i] : 0)) ++c.reconciled;
  }
  return c;
}

void Fleet::StopAll() {
  constexpr size_t kStoppers = 16;
  std::vector<std::thread> stoppers;
  for (size_t t = 0; t < kStoppers && t < agents_.size(); ++t) {
    stoppers.emplace_back([this, t] {
      for (size_t i = t; i < agents_.size(); i += kStoppers) agents_[i]->Stop();
    });
  }
  for (auto& s : stoppers) s.join();
}

Result<std::unique_ptr<TempDir>> TempDir::Create(const std::string& parent) {
  std::string tmpl = parent + "/apollo-bench.XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Status::Unavailable("mkdtemp in " + parent + ": " + std::strerror(errno));
  }
  return std::unique_ptr<TempDir>(new TempDir(tmpl));
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace apollo::bench
