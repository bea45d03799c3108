#include "core/version.h"

namespace apollo {

std::string ProtocolMismatch(uint32_t announced, std::string_view self) {
  const uint32_t peer = PeerProtocol(announced);
  if (peer >= kMinProtocolVersion && peer <= kProtocolVersion) return "";
  const bool center = self == "orchestrator";
  const std::string other = center ? "the agent" : "the orchestrator";
  // A peer newer than this build: this one is behind. Older than it still
  // serves: the peer is.
  const std::string behind = peer > kProtocolVersion ? "this " + std::string(self) : other;
  return other + " speaks agent protocol " + std::to_string(peer) + ", this " + std::string(self) +
         " " + kVersion + " speaks " + std::to_string(kMinProtocolVersion) + ".." +
         std::to_string(kProtocolVersion) + ": upgrade " + behind +
         " (orchestrators before agents: docs/operations.md#upgrades)";
}

}  // namespace apollo
