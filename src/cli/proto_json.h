#pragma once

// The JSON documents apollo-cli prints with `-o json`, built from the
// operator API's messages. Pure functions; times are RFC 3339 UTC strings
// (null when the server left them unset), strings are passed through as-is.
//
// These shapes are a public interface (scripts parse them): add keys, never
// rename or remove one.

#include <nlohmann/json.hpp>
#include <string>

#include "apollo/v1/api.pb.h"

namespace apollo::cli {

// `task status`: {"task_id", "status" (roll-up), "nodes": [{"node_id",
// "status", "updated_at", "attempt", "retries", "last_error",
// "blocked_reason"} + "result" (result_json parsed; kept as a string if it is
// not valid JSON) only when the node has one]}.
nlohmann::json TaskStatusToJson(const v1::Task& task);

// `task list`: {"tasks": [{"task_id", "status", "intent", "created_at"}],
// "next_page_token"}.
nlohmann::json TaskListToJson(const v1::ListTasksResponse& resp);

// `task events`: {"task_id", "entries": [{"at", "node_id", "from", "to",
// "version", "attempt", "cause", "detail"}]} in the server's (history) order.
nlohmann::json HistoryToJson(const std::string& task_id, const v1::TaskEventsResponse& resp);

// `node list`: {"nodes": [{"node_id", "liveness", "mode", "connected",
// "running", "last_heartbeat", "labels" (object), "groups", "intents"}]},
// nodes in the server's order.
nlohmann::json NodesToJson(const v1::ListNodesResponse& resp);

// `task submit`: {"dry_run", "stored" (false on dry run or errors), "tasks":
// [{"task_id", "created", "nodes"}], "errors": [{"file", "line", "column",
// "message"}], "warnings": [...]}.
nlohmann::json SubmitToJson(const v1::SubmitTasksResponse& resp, bool dry_run);

// Pretty-printed with a trailing newline. Never throws: invalid UTF-8 from
// the server is replaced with U+FFFD.
std::string DumpJson(const nlohmann::json& j);

}  // namespace apollo::cli
