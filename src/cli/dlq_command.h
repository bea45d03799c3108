#pragma once

// The event bus's dead-letter queue (issue 7):
//   apollo-cli dlq list [--after ID] [--limit N]   parked events, oldest first
//   apollo-cli dlq show ID                         one letter, with its event
//   apollo-cli dlq replay ID | --all               apply after the cause is fixed
//   apollo-cli dlq drop ID                         give up: recorded as is
// A replay of a letter that still cannot be applied fails (exit 1) and the
// letter stays; `--all` replays what it can and says how many are left.

#include <cstdint>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "apollo/v1/api.pb.h"
#include "cli/global_options.h"
#include "cli/orchestrator_client.h"

namespace apollo::cli {

struct DlqOptions {
  int64_t id = 0;       // show / replay / drop
  bool all = false;     // replay --all
  int64_t after = 0;    // list: letters with a larger id
  int32_t limit = 0;    // list: 0 = the server's default
};

int RunDlqList(const GlobalOptions& global, const DlqOptions& opts, OrchestratorClient& client,
               std::ostream& out, std::ostream& err);
int RunDlqShow(const GlobalOptions& global, const DlqOptions& opts, OrchestratorClient& client,
               std::ostream& out, std::ostream& err);
int RunDlqReplay(const GlobalOptions& global, const DlqOptions& opts, OrchestratorClient& client,
                 std::ostream& out, std::ostream& err);
int RunDlqDrop(const GlobalOptions& global, const DlqOptions& opts, OrchestratorClient& client,
               std::ostream& out, std::ostream& err);

// Pure views, for tests. JSON shapes are public: add keys, never rename.
// {"id", "event_id", "task_id", "node_id", "sequence_number", "event_type",
//  "reason", "deliveries", "parked_at", "event" (object)}
nlohmann::json DeadLetterToJson(const v1::DeadLetter& d);
// Table ID EVENT TASK NODE TYPE DELIVERIES PARKED_AT REASON, or a line
// saying the queue is empty; a --after hint when there are more.
std::string DeadLettersText(const v1::ListDeadLettersResponse& resp);
// "field: value" lines, the event as indented JSON, what to do next.
std::string DeadLetterText(const v1::DeadLetter& d);

}  // namespace apollo::cli
