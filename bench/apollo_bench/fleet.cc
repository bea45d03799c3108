#include "apollo_bench/fleet.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

namespace apollo::bench {

Result<std::unique_ptr<Fleet>> Fleet::Start(const FleetOptions& options,
                                            const agent::HandlerRegistry& registry,
                                            const Clock& clock) {
  std::unique_ptr<Fleet> fleet(new Fleet());
  fleet->agents_.reserve(options.agents);
  for (size_t i = 0; i < options.agents; ++i) {
    SimAgentOptions o;
    o.node_id = options.node_prefix + "-" + std::to_string(i);
    o.orchestrator = options.orchestrator;
    o.wal_dir = options.root_dir + "/" + o.node_id;
    o.labels = options.labels;
    o.max_concurrency = options.max_concurrency;
    o.heartbeat_interval = options.heartbeat_interval;
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
