#pragma once

// A throwaway nats-server -js for tests and benchmarks: loopback only, a free
// port, its store in a temp dir the caller owns. Killed by PID, never by name.
//
// Thread-safety: one thread.

#include <sys/types.h>

#include <string>

#include "core/status.h"

namespace apollo::bus::testing {

class NatsServer {
 public:
  // `dir` must exist; the server keeps its JetStream files under dir/js.
  explicit NatsServer(std::string dir) : dir_(std::move(dir)) {}
  ~NatsServer() { Kill(); }

  // Starts the server (a new free port the first time, the same port after a
  // Kill) and waits until it is ready (bounded). kFailedPrecondition if the
  // nats-server binary is missing.
  Status Start();
  // SIGKILL and reap. Safe to call when not running.
  void Kill();
  bool running() const { return pid_ > 0; }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace apollo::bus::testing
