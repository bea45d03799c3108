#pragma once

// `apollo-cli task watch --task-id ID`: prints per-node progress lines as the
// task changes (server stream WatchTask) until it is final (IsWatchFinal).
// Exit 0 if it ended SUCCEEDED; otherwise 1 with one line on stderr naming
// the final status or why the watch stopped. With `-o json`, prints only the
// final state, shaped like `task status -o json`.

#include <ostream>
#include <string>

#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

struct WatchOptions {
  std::string task_id;
  double max_wait_s = 0;  // give up after this long; 0: wait as long as it takes
};

int RunWatch(const GlobalOptions& global, const WatchOptions& opts, OrchestratorClient& client,
             std::ostream& out, std::ostream& err);

}  // namespace apollo::cli
