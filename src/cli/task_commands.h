#pragma once

// The one-request task commands of apollo-cli: `task status`, `task list`,
// `task cancel`, `task retry`, `task events`, and a rollout's `task pause`,
// `resume`, `approve`, `abort`. Each makes one RPC, prints the
// answer as a table (text) or one JSON document (json) on `out`, and returns
// the exit code; on failure one line "apollo-cli: <reason>" on `err`.

#include <ostream>
#include <string>
#include <vector>

#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

struct TaskIdOptions {
  std::string task_id;
};

struct ListOptions {
  std::string status;      // empty: any; a state name, any case
  std::string intent;      // empty: any
  int limit = 0;           // 0: the server's default
  std::string page_token;  // from a previous list's hint
  std::vector<std::string> meta;  // "key=value": the spec's metadata has it
};

struct CancelOptions {
  std::string task_id;
  std::string reason;
};

// task pause|resume|approve|abort.
struct RolloutOptions {
  std::string task_id;
  std::string reason;
  std::string action;  // the command's name
};

// task deps --add/--remove, task hold, task release.
struct DepsOptions {
  std::string task_id;
  std::vector<std::string> add;
  std::vector<std::string> remove;
  std::string reason;
};
struct HoldOptions {
  std::string task_id;
  std::string reason;
  bool release = false;
};

int RunStatus(const GlobalOptions& global, const TaskIdOptions& opts, OrchestratorClient& client,
              std::ostream& out, std::ostream& err);
int RunList(const GlobalOptions& global, const ListOptions& opts, OrchestratorClient& client,
            std::ostream& out, std::ostream& err);
int RunCancel(const GlobalOptions& global, const CancelOptions& opts, OrchestratorClient& client,
              std::ostream& out, std::ostream& err);
// Asks for FAILED/TIMEOUT nodes to go to RETRYING; prints the task after.
int RunRetry(const GlobalOptions& global, const TaskIdOptions& opts, OrchestratorClient& client,
             std::ostream& out, std::ostream& err);
// Moves the task's rollout; prints the task after (its rollout line first).
int RunRollout(const GlobalOptions& global, const RolloutOptions& opts, OrchestratorClient& client,
               std::ostream& out, std::ostream& err);
int RunDeps(const GlobalOptions& global, const DepsOptions& opts, OrchestratorClient& client,
            std::ostream& out, std::ostream& err);
int RunHold(const GlobalOptions& global, const HoldOptions& opts, OrchestratorClient& client,
            std::ostream& out, std::ostream& err);
int RunEvents(const GlobalOptions& global, const TaskIdOptions& opts, OrchestratorClient& client,
              std::ostream& out, std::ostream& err);

}  // namespace apollo::cli
