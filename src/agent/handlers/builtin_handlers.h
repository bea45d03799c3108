#pragma once

// Factories of the built-in handlers. Each returns a fresh instance for one
// run; see handler.h for the Run() contract they all keep.
//
//   noop            succeeds at once with {}.
//   sleep           params.seconds (number >= 0); honours cancel at once.
//   collect_metrics load, CPU, memory, disks (params.paths, else
//                   `default_paths`), uptime, read from `proc_root` and statvfs.
//   ensure_file     params.path (absolute), .content, optional .mode; atomic
//                   replace; result {"changed": bool, "path": ...}.
//   exec            params.argv, optional .env and .cwd; see exec_handler.cc.
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

std::unique_ptr<Handler> NewNoopHandler();
std::unique_ptr<Handler> NewSleepHandler();
std::unique_ptr<Handler> NewCollectMetricsHandler(
    std::string proc_root, std::vector<std::string> default_paths = {"/"});
std::unique_ptr<Handler> NewEnsureFileHandler();
std::unique_ptr<Handler> NewExecHandler(ProcessOptions options);
std::unique_ptr<Handler> NewExternalHandler(std::string executable, ProcessOptions options);

}  // namespace apollo::agent
