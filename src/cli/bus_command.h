#pragma once

// `apollo-cli bus status`: the event bus's backend, consumer lag per
// partition (published, applied, pending = not applied yet, age of the
// oldest unapplied event) and the dead-letter count. The first thing to look
// at when "the agent says done but the store says running".

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "apollo/v1/api.pb.h"
#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

int RunBusStatus(const GlobalOptions& global, OrchestratorClient& client, std::ostream& out,
                 std::ostream& err);

// Pure views, for tests. JSON (public shape): {"backend", "dead_letters",
// "dead_letters_capped", "totals": {"published", "applied", "pending",
// "dead_lettered", "oldest_unapplied_ms"}, "partitions": [{"partition",
// "published", "applied", "pending", "dead_lettered", "oldest_unapplied_ms"}]}
nlohmann::json BusStatusToJson(const v1::BusStatusResponse& resp);
// "bus: B", a one-line summary, the dead-letter line, then the table
// PARTITION PUBLISHED APPLIED PENDING DEAD_LETTERED OLDEST_UNAPPLIED.
std::string BusStatusText(const v1::BusStatusResponse& resp);

}  // namespace apollo::cli
