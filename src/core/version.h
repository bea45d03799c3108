#pragma once

// What a binary is: its release, the commit it was built from, and the agent
// protocol it speaks.
//
// The release is CMake's project(VERSION) (the one place it is set), given
// to every target as APOLLO_RELEASE. The commit is known only to the
// binaries that link apollo_build_info (core/build_info.h), so a new commit
// relinks three programs, not every library.
//
// The agent protocol (apollo.v1 Hello.protocol_version, Welcome's): the
// contract of proto/apollo/v1/agent.proto and of the session order. Bump
// kProtocolVersion when a change needs both ends to know it; raise
// kMinProtocolVersion only when this release can no longer serve the
// oldest. A peer that sends 0 predates the field and speaks protocol 1.
//
// Thread-safety: constants and pure functions.

#include <cstdint>
#include <string>
#include <string_view>

#ifndef APOLLO_RELEASE
#error "APOLLO_RELEASE is set by CMake (project VERSION)"
#endif

namespace apollo {

inline constexpr const char* kVersion = APOLLO_RELEASE;

inline constexpr uint32_t kProtocolVersion = 1;     // what this build speaks (and sends)
inline constexpr uint32_t kMinProtocolVersion = 1;  // the oldest it still accepts

// The protocol a peer announced, with 0 read as 1 (see above).
inline uint32_t PeerProtocol(uint32_t announced) { return announced == 0 ? 1 : announced; }

// Empty when this build speaks the protocol `announced` by its peer; else one
// line saying so and what to upgrade. `self` is "orchestrator" (the peer is
// an agent) or "edge-agent" (the peer is the orchestrator).
std::string ProtocolMismatch(uint32_t announced, std::string_view self);

}  // namespace apollo
