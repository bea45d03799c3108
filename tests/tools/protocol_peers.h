#pragma once

// Peers that speak another agent protocol (issue 22), for
// tests/e2e/protocol_test.sh, driven by apollo-e2e-tool.
//
//   hello ADDR NODE_ID PROTOCOL
//       Says Hello as NODE_ID with Hello.protocol_version = PROTOCOL to the
//       center at ADDR and prints one JSON line: {"code", "message",
//       "welcome_protocol"} — code 0 with the Welcome's protocol_version,
//       or the status the center ended the stream with.
//   fake-center PORT (welcome:N | refuse) RUN_S
//       Serves AgentGateway on 127.0.0.1:PORT for RUN_S seconds: answers
//       every Hello with a Welcome saying protocol N, or ends the stream
//       with FAILED_PRECONDITION as a center that cannot speak the agent's
//       protocol does. Prints {"sessions"} at the end.
//
// Both return 0 when they ran, 1 on a failure to run, 2 on bad arguments.

#include <string>
#include <vector>

namespace apollo::e2e {

int SayHello(const std::vector<std::string>& args);
int FakeCenter(const std::vector<std::string>& args);

}  // namespace apollo::e2e
