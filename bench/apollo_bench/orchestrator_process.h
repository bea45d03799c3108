#pragma once

// A real bin/orchestrator child process for the benchmark: started on a
// loopback port (0 = the kernel picks; the port is kept across restarts so
// agents find it again), killed with SIGKILL or stopped with SIGTERM, and
// read from /proc for RSS and CPU time. Output goes to a log file.
//
// Only the process this object started is ever signalled, by its PID.
// Every wait is bounded.
//
// Thread-safety: not thread-safe; one owner. The /proc readers are free
// functions, safe anywhere.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace apollo::bench {

struct OrchestratorSpec {
  std::string binary;       // path of bin/orchestrator
  std::string store_url;    // sqlite://... or postgresql://...
  std::string log_path;     // stdout and stderr, appended
  std::vector<std::string> extra_args;
  // Start it in a session of its own (setsid). With the kernel's
  // autogroups (kernel.sched_autogroup_enabled) the scheduler then shares
  // the CPU between its session and ours before sharing it between
  // threads: thousands of busy simulated agents cannot starve it of more
  // than half of the machine. Also keeps a terminal's Ctrl-C from reaching
  // it (we kill it ourselves, by PID).
  bool own_session = false;
};

class OrchestratorProcess {
 public:
  // Starts it and waits (up to `timeout`) until it prints its port and
  // accepts TCP connections there.
  static Result<std::unique_ptr<OrchestratorProcess>> Start(const OrchestratorSpec& spec,
                                                            Duration timeout);
  // SIGKILL if still running.
  ~OrchestratorProcess();
  OrchestratorProcess(const OrchestratorProcess&) = delete;
  OrchestratorProcess& operator=(const OrchestratorProcess&) = delete;

  // kill -9 and reap.
  void Kill();
  // SIGTERM, wait up to `timeout`, then SIGKILL.
  void Terminate(Duration timeout);
  // Starts it again on the same port (after Kill/Terminate).
  Status Restart(Duration timeout);

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  explicit OrchestratorProcess(OrchestratorSpec spec) : spec_(std::move(spec)) {}
  Status Launch(int port, Duration timeout);

  OrchestratorSpec spec_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// Resident set size of `pid` in MiB (VmRSS), or nullopt if unreadable.
std::optional<double> ProcessRssMb(pid_t pid);
// utime + stime of `pid` in seconds, or nullopt if unreadable.
std::optional<double> ProcessCpuSeconds(pid_t pid);
// Threads of `pid` (from /proc/PID/status), or nullopt.
std::optional<int> ProcessThreads(pid_t pid);
// The soft limit on open files of `pid` (from /proc/PID/limits; -1 for
// unlimited), or nullopt.
std::optional<int64_t> ProcessMaxOpenFiles(pid_t pid);
// How many files `pid` has open (entries of /proc/PID/fd), or nullopt.
std::optional<int64_t> ProcessOpenFiles(pid_t pid);

}  // namespace apollo::bench
