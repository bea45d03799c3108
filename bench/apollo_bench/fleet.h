#pragma once

// M simulated agents in this process (see sim_agent.h), each with its own
// node_id "<prefix>-<i>" and WAL directory "<root>/<node_id>", label
// role=bench, and (unless shared_connection) its own TCP connection to the
// center. Started one by one; stopped in parallel by the destructor. One
// session monitor serves the whole fleet.
//
// Thread-safety: not thread-safe; one owner. connected() may be called
// from any thread.

#include <memory>
#include <string>
#include <vector>

#include "apollo_bench/sim_agent.h"

namespace apollo::bench {

struct FleetOptions {
  size_t agents = 1;
  std::string orchestrator;  // host:port
  std::string root_dir;      // WAL directories go under it
  std::string node_prefix = "bench";
  std::map<std::string, std::string> labels = {{"role", "bench"}};
  int max_concurrency = 1;
  Duration heartbeat_interval = std::chrono::seconds(10);
  // false (default): each agent dials its own connection, as real agents
  // do; true: every agent of the process shares one HTTP/2 connection (the
  // bench before issue 18; the center's per-agent cost is then a lower bound).
  bool shared_connection = false;
};

// Whether this process and machine can hold `agents` simulated agents:
// file descriptors (RLIMIT_NOFILE) and threads (kernel.pid_max and
// vm.max_map_count, shared with everything else running), for agents that
// run no work (idle, reconnect) or that each start `workers` executor
// threads. FailedPrecondition naming the limit and what it needs, else OK.
Status CheckFleetCapacity(size_t agents, int workers, bool shared_connection);

class Fleet {
 public:
  static Result<std::unique_ptr<Fleet>> Start(const FleetOptions& options,
                                              const agent::HandlerRegistry& registry,
                                              const Clock& clock);
  ~Fleet();

  size_t size() const { return agents_.size(); }
  SimAgent& agent(size_t i) { return *agents_[i]; }
  size_t connected() const;
  // Polls until `n` agents are connected; false after `timeout`.
  bool WaitConnected(size_t n, Duration timeout) const;
  // Stops every agent (in parallel: each Stop joins a few threads).
  void StopAll();

 private:
  Fleet() = default;
  // Declared first: destroyed after every agent that uses it.
  std::unique_ptr<agent::SessionMonitor> monitor_;
  std::vector<std::unique_ptr<SimAgent>> agents_;
};

// A fresh directory (mkdtemp under `parent`), removed with everything in it
// by the destructor.
class TempDir {
 public:
  static Result<std::unique_ptr<TempDir>> Create(const std::string& parent);
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace apollo::bench
