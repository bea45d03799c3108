#pragma once

// M simulated agents in this process (see sim_agent.h), each with its own
// node_id "<prefix>-<i>" and WAL directory "<root>/<node_id>", label
// role=bench. Started one by one; stopped in parallel by the destructor.
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

 private:
  Fleet() = default;
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
