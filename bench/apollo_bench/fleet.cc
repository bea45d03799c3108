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

}  // namespace

Status CheckFleetCapacity(size_t agents, int workers, bool shared_connection) {
  const int64_t n = static_cast<int64_t>(agents);
  // WAL lock + active segment (+ the agent's own socket), and some slack
  // for the process itself (store, API client, logs).
  const int64_t fds = n * (shared_connection ? 2 : 3) + 256;
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && static_cast<int64_t>(nofile.rlim_cur) < fds) {
    return Status::FailedPrecondition(
        std::to_string(agents) + " agents need " + std::to_string(fds) +
        " file descriptors; RLIMIT_NOFILE is " + std::to_string(nofile.rlim_cur) +
        " (hard limit " + std::to_string(nofile.rlim_max) +
        "; raising it needs CAP_SYS_RESOURCE; or --shared-connection: 2 per agent)");
  }
  // Session loop and session writer, plus the executor workers (the WAL
  // has no thread of its own: its appenders take turns to sync).
  const int64_t threads = n * (2 + std::max(0, workers)) + 200;
  auto pid_max = ReadProcNumber("/proc/sys/kernel/pid_max");
  auto running = MachineThreads();
  if (pid_max && running && threads + *running > *pid_max) {
    return Status::FailedPrecondition(
        std::to_string(agents) + " agents need ~" + std::to_string(threads) +
        " threads; kernel.pid_max is " + std::to_string(*pid_max) + " and " +
        std::to_string(*running) + " threads already run on this machine");
  }
  // Each thread stack is two mappings (the stack and its guard page).
  auto max_maps = ReadProcNumber("/proc/sys/vm/max_map_count");
  if (max_maps && 2 * threads + 2000 > *max_maps) {
    return Status::FailedPrecondition(
        std::to_string(agents) + " agents need ~" + std::to_string(2 * threads + 2000) +
        " memory mappings (2 per thread); vm.max_map_count is " + std::to_string(*max_maps));
  }
  return Status::Ok();
}

Result<std::unique_ptr<Fleet>> Fleet::Start(const FleetOptions& options,
                                            const agent::HandlerRegistry& registry,
                                            const Clock& clock) {
  std::unique_ptr<Fleet> fleet(new Fleet());
  fleet->monitor_ = std::make_unique<agent::SessionMonitor>();
  fleet->agents_.reserve(options.agents);
  for (size_t i = 0; i < options.agents; ++i) {
    SimAgentOptions o;
    o.node_id = options.node_prefix + "-" + std::to_string(i);
    o.orchestrator = options.orchestrator;
    o.wal_dir = options.root_dir + "/" + o.node_id;
    o.labels = options.labels;
    o.max_concurrency = options.max_concurrency;
    o.heartbeat_interval = options.heartbeat_interval;
    o.shared_connection = options.shared_connection;
    o.monitor = fleet->monitor_.get();
    auto a = SimAgent::Open(o, registry, clock);
    if (!a.ok()) return a.status().WithPrefix("agent " + std::to_string(i));
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
