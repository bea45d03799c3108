#pragma once

// `apollo-cli node list`: every node the orchestrator knows, with its
// liveness (ALIVE, SUSPECT, LOST, NEVER_SEEN), mode, connection and load.

#include <ostream>

#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

// Returns the exit code; on failure one line "apollo-cli: <reason>" on `err`.
int RunNodeList(const GlobalOptions& global, OrchestratorClient& client, std::ostream& out,
                std::ostream& err);

}  // namespace apollo::cli
