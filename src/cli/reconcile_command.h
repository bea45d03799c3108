#pragma once

// `apollo-cli node sync --node-id N`: asks a connected agent for a snapshot
// now; the center reconciles on it.
// `apollo-cli reconcile [--node-id N] [--dry-run]`: compares the latest
// snapshots with the store; --dry-run shows the drift and repairs nothing.

#include <ostream>
#include <string>

#include "apollo/v1/api.pb.h"
#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

struct ReconcileOptions {
  std::string node_id;  // empty: every node with a snapshot
  bool dry_run = false;
};

int RunNodeSync(const GlobalOptions& global, const std::string& node_id,
                OrchestratorClient& client, std::ostream& out, std::ostream& err);
int RunReconcile(const GlobalOptions& global, const ReconcileOptions& opts,
                 OrchestratorClient& client, std::ostream& out, std::ostream& err);

// `apollo-cli intent list`: circuit breakers per intent, queue watermarks
// and the retry budget.
int RunIntentList(const GlobalOptions& global, OrchestratorClient& client, std::ostream& out,
                  std::ostream& err);

// The human form of a reconcile answer (pure, for tests).
std::string ReconcileText(const v1::ReconcileResponse& resp, bool dry_run);

}  // namespace apollo::cli
