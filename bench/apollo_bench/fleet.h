#pragma once

// M simulated agents in this process (see sim_agent.h), each with its own
// node_id "<prefix>-<i>" (i from first_index: a fleet spread over several
// processes, split_fleet.h, gives each process a slice of the indexes) and
// WAL directory "<root>/<node_id>", label role=bench, and (unless
// shared_connection) its own TCP connection to the center. Started one by
// one; stopped in parallel by the destructor. One session monitor serves
// the whole fleet.
//
// Thread-safety: not thread-safe; one owner. connected() may be called
// from any thread.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apollo_bench/sim_agent.h"

namespace apollo::bench {

struct FleetOptions {
  size_t agents = 1;
  size_t first_index = 0;    // node ids "<node_prefix>-<first_index + i>"
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
  // While starting: at most this many agents started and not connected yet
  // (0: no bound, every agent dials at once). Thousands dialling at once
  // overflow the center's accept queue; an agent gives a connection attempt
  // only its initial backoff (500 ms, gRPC's minimum connect timeout), so
  // the attempts it abandons pile up at the center as CLOSE_WAIT sockets
  // until the center's fd limit, after which gRPC 1.51 stops accepting.
  size_t max_connecting = 0;
  // The pacing waits at most this long in all; then the rest start at once.
  Duration start_timeout = std::chrono::seconds(300);
};

// File descriptors one process needs to host `agents` simulated agents:
// WAL lock + active segment (+ the agent's own socket), and some slack for
// the process itself (store, API client, logs).
int64_t FleetFds(size_t agents, bool shared_connection);

// The most agents one process should host under its RLIMIT_NOFILE: FleetFds
// within three quarters of the soft limit (a quarter kept free: a
// reconnecting agent may hold a new socket before the old one is closed).
// 4,914 agents with 20,000 descriptors. At least 1.
size_t MaxAgentsPerProcess(bool shared_connection);

// Whether this process can hold `agents` simulated agents: file descriptors
// (FleetFds against RLIMIT_NOFILE) and memory mappings (vm.max_map_count
// is per process: 2 per thread), for agents that run no work (idle,
// reconnect) or that each start `workers` executor threads.
// FailedPrecondition naming the limit and what it needs, else OK.
Status CheckProcessCapacity(size_t agents, int workers, bool shared_connection);

// Whether the machine can run the threads of `agents` agents spread over
// `processes` bench processes: kernel.pid_max bounds the threads of every
// process on the machine, shared with everything else running.
// FailedPrecondition naming what it needs, else OK.
Status CheckMachineThreads(size_t agents, size_t processes, int workers);

// The whole fleet in this one process: both of the above.
Status CheckFleetCapacity(size_t agents, int workers, bool shared_connection);

// What a fleet, or a slice of one, reports about its agents (split_fleet.h
// sums the slices; fleet_child.h carries one over a pipe).
struct FleetCounts {
  size_t agents = 0;
  size_t connected = 0;
  size_t synced = 0;
  // Synced on a session newer than the one they had at the last Mark().
  size_t reconciled = 0;
  uint64_t sessions = 0;  // sessions_started(), summed
  // Of the processes hosting them: threads summed, the most open files of
  // any one, how many processes. Left 0 by Fleet::Counts.
  int64_t threads = 0;
  int64_t max_fds = 0;
  size_t processes = 0;
};

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
  // Records each agent's sessions_started() as the point Counts().reconciled
  // counts from; returns their sum.
  uint64_t Mark();
  FleetCounts Counts() const;

 private:
  Fleet() = default;
  // Until fewer than `below` started agents are not connected, or `until`.
  void WaitConnecting(size_t below, std::chrono::steady_clock::time_point until) const;
  // Declared first: destroyed after every agent that uses it.
  std::unique_ptr<agent::SessionMonitor> monitor_;
  std::vector<std::unique_ptr<SimAgent>> agents_;
  std::vector<uint64_t> marks_;  // per agent, from Mark(); empty: all 0
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
