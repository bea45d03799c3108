#pragma once

// The agent's HTTP endpoint (`metrics_listen`, --metrics-listen; off by
// default): GET /metrics (agent_metrics.h) and GET /healthz ("ok"), plain
// HTTP, no token: the values say how the agent runs, not what its tasks
// do. Anything else is a JSON 404. Two worker threads; 5 s timeouts.
// cpp-httplib, as the orchestrator's HTTP server (its README says why).
//
// Thread-safety: Start and Stop from one thread.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/config_values.h"
#include "core/status.h"

namespace httplib {
class Server;
}

namespace apollo::agent {

class MetricsServer {
 public:
  MetricsServer(HostPort listen, std::function<std::string()> metrics);
  ~MetricsServer();  // Stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and serves on a thread of its own; Unavailable when the address
  // cannot be bound.
  Status Start();
  void Stop();  // idempotent
  int port() const { return port_; }

 private:
  const HostPort listen_;
  const std::function<std::string()> metrics_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace apollo::agent
