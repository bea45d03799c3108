#pragma once

// The store's alerts (operator visibility):
//   apollo-cli alert list [--kind K] [--node N] [--after ID] [--limit N]
// Oldest first; kinds include illegal_transition, unknown_task, malformed,
// circuit_open, queue_alert, queue_paused, queue_resumed, queue_cleared,
// unknown_to_store and dead_letter (an event the bus parked).

#include <cstdint>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "apollo/v1/api.pb.h"
#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

struct AlertOptions {
  std::string kind;     // only this kind
  std::string node_id;  // only this node
  int64_t after = 0;    // only alerts with a larger id (paging)
  int32_t limit = 0;    // 0 = the server's default
};

int RunAlertList(const GlobalOptions& global, const AlertOptions& opts,
                 OrchestratorClient& client, std::ostream& out, std::ostream& err);

// Pure views, for tests. JSON shapes are public: add keys, never rename.
// {"id", "at" (RFC 3339), "kind", "node_id", "task_id", "message", "from",
//  "to", "event_id"} (absent values are null)
nlohmann::json AlertToJson(const v1::Alert& a);
// Table ID TIME KIND NODE TASK MESSAGE, or a line saying there is none; an
// --after hint when there may be more.
std::string AlertsText(const v1::ListAlertsResponse& resp, const AlertOptions& opts);

}  // namespace apollo::cli
