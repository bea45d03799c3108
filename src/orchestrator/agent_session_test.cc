#include "orchestrator/agent_session.h"

#include <gtest/gtest.h>

namespace apollo::orchestrator {
namespace {

// The dispatcher holds work for a node back with blocked_reason
// conservative_mode while its session is conservative and not ready.
TEST(SessionHandleTest, ConservativeFromHelloUntilReady) {
  SessionHandle h("edge-1");
  EXPECT_FALSE(h.conservative());
  EXPECT_FALSE(h.connected());  // no stream behind it: sends are dropped
  h.SetConservative(true);      // its Hello said so
  EXPECT_TRUE(h.conservative());
  EXPECT_FALSE(h.ready());
  h.MarkReady();  // the SnapshotAck just sent takes the agent out of the mode
  EXPECT_FALSE(h.conservative());
  EXPECT_TRUE(h.ready());
}

}  // namespace
}  // namespace apollo::orchestrator
