#pragma once

// `apollo-cli task submit --file F [--dry-run]`: validates F locally with
// core's parser (problems printed as "file:line:column: message", nothing
// sent, exit 1), then sends its tasks to the orchestrator as typed specs (the
// server parses no YAML; the file's text only when it names a retry preset
// only the server knows) and prints, per task, its id, whether it was
// created or already there unchanged, and the nodes it resolved to.
// Server-side diagnostics are printed like local ones, a typed task's at its
// intent's line:column (exit 1); warnings as "warning: ..." on stderr.

#include <ostream>
#include <string>

#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

struct SubmitOptions {
  std::string file;
  bool dry_run = false;
  bool force = false;  // accept an intent no matched node offers
};

// Returns the exit code. The client is only used once the file is valid.
int RunSubmit(const GlobalOptions& global, const SubmitOptions& opts, OrchestratorClient& client,
              std::ostream& out, std::ostream& err);

}  // namespace apollo::cli
