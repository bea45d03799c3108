#include "core/version.h"

#include <gtest/gtest.h>

namespace apollo {
namespace {

TEST(VersionTest, ReleaseComesFromCMake) {
  EXPECT_STREQ(kVersion, APOLLO_RELEASE);
  EXPECT_NE(std::string(kVersion).find('.'), std::string::npos);
}

TEST(VersionTest, SpeaksItsOwnRangeAndReadsZeroAsOne) {
  EXPECT_EQ(ProtocolMismatch(kProtocolVersion, "orchestrator"), "");
  EXPECT_EQ(ProtocolMismatch(kMinProtocolVersion, "edge-agent"), "");
  EXPECT_EQ(PeerProtocol(0), 1u);
  EXPECT_EQ(ProtocolMismatch(0, "orchestrator"), "");  // an agent from before the field
}

TEST(VersionTest, RefusalSaysWhoIsBehind) {
  const std::string v = kVersion;
  const std::string range =
      std::to_string(kMinProtocolVersion) + ".." + std::to_string(kProtocolVersion);
  const uint32_t newer = kProtocolVersion + 1;
  EXPECT_EQ(ProtocolMismatch(newer, "orchestrator"),
            "the agent speaks agent protocol " + std::to_string(newer) + ", this orchestrator " +
                v + " speaks " + range +
                ": upgrade this orchestrator (orchestrators before agents: "
                "docs/operations.md#upgrades)");
  EXPECT_EQ(ProtocolMismatch(newer, "edge-agent"),
            "the orchestrator speaks agent protocol " + std::to_string(newer) +
                ", this edge-agent " + v + " speaks " + range +
                ": upgrade this edge-agent (orchestrators before agents: "
                "docs/operations.md#upgrades)");
  if (kMinProtocolVersion > 1) {
    EXPECT_NE(ProtocolMismatch(kMinProtocolVersion - 1, "orchestrator").find("upgrade the agent"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace apollo
