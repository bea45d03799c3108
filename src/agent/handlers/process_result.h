#pragma once

// Shared by the handlers that run a child process (exec, external): the
// environment every handler process gets, and how a ChildOutcome becomes a
// HandlerResult.
//
// Thread-safety: pure functions.

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "agent/handlers/child_process.h"
#include "agent/handlers/handler.h"

namespace apollo::agent {

// `extra` plus APOLLO_TASK_ID/ATTEMPT/NODE_ID/INTENT; the APOLLO_* values
// win, so params cannot spoof them.
std::map<std::string, std::string> HandlerProcessEnv(
    const HandlerContext& ctx, const std::map<std::string, std::string>& extra);

// {"exit_code", "stdout_tail", "stderr_tail", ...}. Tails are made valid
// UTF-8. A death by signal N reports exit_code 128+N (as a shell would)
// and "signal": N.
nlohmann::json ChildDetail(const ChildOutcome& child);

// "exited with code 3" / "killed by signal 9 (Killed)".
std::string DescribeExit(const ChildOutcome& child);

// The last non-empty line of `text`, cut to `max` bytes (valid UTF-8).
std::string LastLine(std::string_view text, size_t max = 300);

}  // namespace apollo::agent
