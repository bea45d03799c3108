#pragma once

// Misbehaving agent-stream peers for the resource-bound e2e test
// (tests/e2e/bounds_test.sh), driven by apollo-e2e-tool.
//
//   silent-streams ADDR N WAIT_S
//       Opens N AgentGateway.Connect streams (over several connections) and
//       never sends anything; waits up to WAIT_S for the center to end them.
//       Prints one JSON line: {"opened", "ended", "deadline_exceeded",
//       "other", "still_open", "seconds"}.
//   stalled-reader ADDR NODE_ID RUN_S
//       For RUN_S seconds: connects as NODE_ID (offering intent noop), reads
//       the Welcome, sends an empty complete snapshot (so the center hands
//       it work), then never reads again, heartbeating every 200 ms; when
//       the center cuts the stream off it reconnects, as an agent would.
//       Prints one JSON line: {"sessions", "ended", "seconds"}.
//
// Both return 0 when they ran (the script judges the figures), 1 on a
// failure to run, 2 on bad arguments.

#include <string>
#include <vector>

namespace apollo::e2e {

int SilentStreams(const std::vector<std::string>& args);
int StalledReader(const std::vector<std::string>& args);

}  // namespace apollo::e2e
