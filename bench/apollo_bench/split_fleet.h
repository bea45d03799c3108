#pragma once

// A fleet spread over this process and child bench processes, for fleets
// that do not fit in one process's RLIMIT_NOFILE (3 descriptors per agent;
// MaxAgentsPerProcess). The agents are split into `processes` slices of
// consecutive indexes, as even as can be: this process hosts the first
// (an ordinary Fleet), each child one of the others (fleet_child.h), so
// node ids stay "<prefix>-<i>" over the whole fleet and every WAL dir sits
// under the same root. With one process it is just a Fleet.
//
// What it offers is what idle and reconnect need: the size, Mark() and
// Counts() over the whole fleet. A scenario that drives single agents
// (fanout's tasks, latency's agent) uses a Fleet in one process.
//
// The children: fork()ed by the thread that calls Start (which must outlive
// them: PR_SET_PDEATHSIG fires when that thread ends; the scenarios run on
// the main thread), re-executing /proc/self/exe; each PID is recorded in
// ChildPids while it runs, so the SIGINT handler kills it too. The
// destructor asks each child to quit, stops the local agents, waits up to
// the timeout for the children, then SIGKILLs what is left and reaps it.
// Every wait on a child is bounded by the timeout given to Start.
//
// Thread-safety: not thread-safe; one owner.

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "apollo_bench/fleet.h"
#include "apollo_bench/fleet_child.h"

namespace apollo::bench {

class ChildPids;  // scenario_env.h

// This process's end of one child: its PID and its stdin/stdout pipes.
class FleetChild {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  // Forks and execs the child for `slice`, records its PID in `pids` (may
  // be null). Does not wait for it to start its slice.
  static Result<std::unique_ptr<FleetChild>> Spawn(const FleetOptions& slice, ChildPids* pids);
  // SIGKILL and reap if still running.
  ~FleetChild();
  FleetChild(const FleetChild&) = delete;
  FleetChild& operator=(const FleetChild&) = delete;

  // "fleet child (agents 400-599, pid 1234)", for messages.
  const std::string& name() const { return name_; }
  Status Send(const std::string& line);
  // The next line it wrote, without the newline. DeadlineExceeded at
  // `deadline`; Unavailable if it closed its stdout (exited).
  Result<std::string> ReadLine(Deadline deadline);
  // A reply, as fleet_child.h parses it; an "error" reply is Internal with
  // its message.
  Result<Reply> ReadReply(Deadline deadline);
  // Sends "quit" and closes its stdin.
  void Quit();
  // Waits until it exits or `deadline`, then SIGKILLs and reaps it.
  void Reap(Deadline deadline);

 private:
  FleetChild(pid_t pid, int to_child, int from_child, std::string name, ChildPids* pids)
      : pid_(pid),
        to_child_(to_child),
        from_child_(from_child),
        name_(std::move(name)),
        pids_(pids) {}

  pid_t pid_;
  int to_child_;    // its stdin; -1 once closed
  int from_child_;  // its stdout
  std::string name_;
  ChildPids* pids_;
  std::string buffer_;  // read, not yet returned by ReadLine
};

class SplitFleet {
 public:
  // Starts `options.agents` agents in `processes` processes and waits (up to
  // `timeout`) until every child reports its slice started: each agent has
  // opened its WAL and dialled, not necessarily connected yet. A child that
  // could not: its error message, naming the child.
  static Result<std::unique_ptr<SplitFleet>> Start(const FleetOptions& options, size_t processes,
                                                   const agent::HandlerRegistry& registry,
                                                   const Clock& clock, Duration timeout,
                                                   ChildPids* pids);
  ~SplitFleet();

  size_t size() const { return agents_; }
  size_t processes() const { return children_.size() + 1; }
  // Fleet::Mark in every process; the fleet's sum.
  Result<uint64_t> Mark();
  // Fleet::Counts summed over the processes, with their threads (summed)
  // and open files (the most of any one).
  Result<FleetCounts> Counts();

 private:
  SplitFleet() = default;

  size_t agents_ = 0;
  Duration timeout_{};
  std::unique_ptr<Fleet> local_;
  std::vector<std::unique_ptr<FleetChild>> children_;
};

}  // namespace apollo::bench
