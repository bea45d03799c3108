#pragma once

// Runs one child process under supervision, for the exec and external
// handlers.
//
// The child runs argv directly (execve after a PATH lookup; no shell unless
// argv names one) in a process group of its own, with every fd but its
// three pipes closed. Its environment is the agent's plus `env_overrides`,
// or, without `inherit_env`, `env_overrides` alone. The parent writes
// `stdin_data` and closes stdin, polls stdout and stderr together (so
// neither pipe can fill up and deadlock the child), keeps a bounded tail of
// each and hands complete stdout lines to a callback.
//
// Stopping: when the StopCondition trips (cancel or deadline), the whole
// group gets SIGTERM, then SIGKILL after `kill_grace`. When the child exits
// by itself, whatever it left running in its group is stopped the same way.
// RunChild returns only after the child is reaped and no live process of its
// group is left (bounded: a process stuck in the kernel after SIGKILL is
// reported in `group_left_behind` rather than waited on forever).
//
// The kill grace is measured on the real monotonic clock, not the injected
// one: it is time given to real processes to exit, which no test clock can
// shorten. The deadline is read from the injected clock.
//
// Thread-safety: RunChild may be called from several threads at once; each
// call owns its child. It blocks the calling thread until the end.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/handlers/cancel_token.h"
#include "core/status.h"

namespace apollo::agent {

inline constexpr std::chrono::milliseconds kDefaultKillGrace{5000};
inline constexpr size_t kDefaultTailBytes = 4096;

struct ChildSpec {
  std::vector<std::string> argv;                     // non-empty
  // What to execve; empty: argv[0], looked up on the child's PATH.
  std::string executable;
  std::map<std::string, std::string> env_overrides;  // added to the agent's env
  bool inherit_env = true;                           // false: env_overrides only
  std::string cwd;                                   // empty: the agent's cwd
  std::string stdin_data;                            // written, then stdin closed
  size_t tail_bytes = kDefaultTailBytes;             // per stream
  size_t max_line_bytes = 1 << 20;                   // longer lines are cut
  std::chrono::milliseconds kill_grace = kDefaultKillGrace;
};

struct ChildOutcome {
  pid_t pid = -1;           // also the process group id
  bool exited = false;      // exited normally: see exit_code
  int exit_code = -1;
  int term_signal = 0;      // killed by this signal (if !exited)
  StopReason stopped = StopReason::kNone;  // we stopped it (cancel/timeout)
  bool killed = false;      // SIGKILL had to be sent to the group
  bool group_left_behind = false;  // live group members survived SIGKILL
  std::string stdout_tail;  // raw bytes, last tail_bytes
  std::string stderr_tail;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
};

struct ChildCallbacks {
  std::function<void(pid_t pid)> on_started;          // may be empty
  std::function<void(std::string_view line)> on_stdout_line;  // may be empty
  // Lines of stdout that begin with `hidden_prefix` and for which
  // `hide_line` returns true are left out of stdout_tail (they still reach
  // on_stdout_line): exec's "::progress::" lines. Empty: stdout as written.
  std::string hidden_prefix;
  std::function<bool(std::string_view line)> hide_line;
};

// Errors (no child is left running after any of them):
//   InvalidArgument - empty argv
//   NotFound        - argv[0] not found on PATH / does not exist
//   PermissionDenied- argv[0] not executable
//   FailedPrecondition - cwd unusable (reported by the child before exec)
//   Internal        - pipe/fork failed
// A child that ran, whatever its exit, is an OK result.
Result<ChildOutcome> RunChild(const ChildSpec& spec, const StopCondition& stop,
                              const ChildCallbacks& callbacks = {});

// True if a process other than a zombie is in process group `pgid`.
// Reads `proc_root` (normally "/proc"). Exposed for tests.
bool GroupHasLiveMembers(pid_t pgid, const std::string& proc_root = "/proc");

}  // namespace apollo::agent
