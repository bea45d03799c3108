#pragma once

// Factories of the built-in handlers. Each returns a fresh instance for one
// run; see handler.h for the Run() contract they all keep.
//
//   noop            succeeds at once with {}.
//   sleep           params.seconds (number >= 0); honours cancel at once.
//   collect_metrics load, CPU, memory, disks (params.paths, else
//                   `default_paths`), uptime, read from `proc_root` and statvfs.
//   ensure_file     params.path (absolute, under an allowed dir), .content,
//                   optional .mode; never follows a symlink; atomic replace;
//                   result {"changed": bool, "path": ...}. See
//                   ensure_file_handler.cc.
//   exec            params.argv, optional .env and .cwd, in a minimal
//                   environment; "::progress::" lines; see exec_handler.cc.
//   external        an executable speaking the JSON-lines protocol; see
//                   external_handler.cc.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "agent/handlers/child_process.h"
#include "agent/handlers/handler.h"

namespace apollo::agent {

// How handlers that run processes stop and capture them.
struct ProcessOptions {
  std::chrono::milliseconds kill_grace = kDefaultKillGrace;
  size_t tail_bytes = kDefaultTailBytes;
};

// What exec may run. The agent's config (exec.allowed_commands) fills it.
struct ExecPolicy {
  // fnmatch(3) patterns (FNM_PATHNAME | FNM_PERIOD) of absolute paths, e.g.
  // "/usr/bin/systemctl", "/opt/app/bin/*". argv[0], resolved on the
  // child's PATH, must match one; else the run is refused (permanent).
  // Empty: any command.
  std::vector<std::string> allowed_commands;
};

// Where ensure_file may write. The agent's config (ensure_file.*) fills it.
struct EnsureFilePolicy {
  // Absolute directories; a path must lie below one of them. Empty: none,
  // so every ensure_file is refused (permanent) saying how to allow it.
  std::vector<std::string> allowed_dirs;
  // setuid, setgid and sticky bits in params.mode (or kept from the file
  // being replaced) are refused / dropped unless this is set.
  bool allow_special_modes = false;
};

// PATH of exec's children unless params.env sets one: no /usr/local, which
// is often group-writable.
inline constexpr char kExecPath[] = "/usr/bin:/bin";
// The line prefix by which an exec'd command reports progress.
inline constexpr char kProgressMarker[] = "::progress::";

std::unique_ptr<Handler> NewNoopHandler();
std::unique_ptr<Handler> NewSleepHandler();
std::unique_ptr<Handler> NewCollectMetricsHandler(
    std::string proc_root, std::vector<std::string> default_paths = {"/"});
std::unique_ptr<Handler> NewEnsureFileHandler(EnsureFilePolicy policy);
std::unique_ptr<Handler> NewExecHandler(ProcessOptions options, ExecPolicy policy = {});
std::unique_ptr<Handler> NewExternalHandler(std::string executable, ProcessOptions options);

}  // namespace apollo::agent
