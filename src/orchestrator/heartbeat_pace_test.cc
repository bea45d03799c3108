#include "orchestrator/heartbeat_pace.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "orchestrator/orchestrator.h"
#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(HeartbeatPaceTest, SmallFleetsKeepTheConfiguredInterval) {
  EXPECT_EQ(HeartbeatPace(seconds(10), 0, 200), seconds(10));
  EXPECT_EQ(HeartbeatPace(seconds(10), 1, 200), seconds(10));
  EXPECT_EQ(HeartbeatPace(seconds(10), 2000, 200), seconds(10));  // exactly 200/s
  EXPECT_EQ(HeartbeatPace(milliseconds(1500), 100, 200), milliseconds(1500));
}

TEST(HeartbeatPaceTest, LargeFleetsStretchItToTheCeilingRate) {
  EXPECT_EQ(HeartbeatPace(seconds(10), 2001, 200), seconds(11));  // rounded up
  EXPECT_EQ(HeartbeatPace(seconds(10), 10'000, 200), seconds(50));
  EXPECT_EQ(HeartbeatPace(seconds(2), 3, 1), seconds(3));
  EXPECT_EQ(HeartbeatPace(seconds(10), 10'000'000, 200), minutes(5));  // agents' ceiling
}

TEST(HeartbeatPaceTest, NoCeilingMeansTheConfiguredInterval) {
  EXPECT_EQ(HeartbeatPace(seconds(10), 10'000, 0), seconds(10));
}

// The center names the paced interval in each Welcome, stretches liveness by
// the same factor, and after a restart paces for the fleet its store knows.
TEST(HeartbeatPaceTest, TheCenterPacesItsFleetAndStretchesLiveness) {
  ManualClock clock;
  testing::TempStore temp(clock);
  ASSERT_TRUE(temp.status().ok()) << temp.status().ToString();
  OrchestratorOptions o;
  o.heartbeat_interval = seconds(10);
  o.suspect_after = seconds(30);
  o.lost_after = seconds(60);
  o.max_heartbeats_per_s = 2;  // 20 agents at 10 s
  auto connect = [](Orchestrator& brain, int n) {
    auto handle = std::make_shared<SessionHandle>("edge-" + std::to_string(n));
    apollo::v1::Hello hello;
    hello.set_node_id(handle->node_id());
    apollo::v1::Welcome welcome;
    EXPECT_TRUE(brain.OnHello(handle, hello, &welcome).ok());
    return welcome.heartbeat_interval_ms();
  };
  {
    Orchestrator brain(o, *temp.store(), clock);
    for (int n = 0; n < 20; ++n) EXPECT_EQ(connect(brain, n), 10'000) << n;
    EXPECT_EQ(connect(brain, 20), 11'000);  // 21 agents: 10.5 s, rounded up
    for (int n = 21; n < 29; ++n) connect(brain, n);
    EXPECT_EQ(connect(brain, 29), 15'000);  // 30 agents at 2/s
    EXPECT_EQ(brain.HeartbeatInterval(), seconds(15));
    // x1.5: SUSPECT after 45 s of silence, LOST after 90 s.
    store::NodeInfo node;
    node.registered = true;
    node.last_heartbeat = clock.Now() - seconds(40);
    EXPECT_EQ(brain.NodeLiveness(node), Liveness::kAlive);
    node.last_heartbeat = clock.Now() - seconds(50);
    EXPECT_EQ(brain.NodeLiveness(node), Liveness::kSuspect);
    node.last_heartbeat = clock.Now() - seconds(91);
    EXPECT_EQ(brain.NodeLiveness(node), Liveness::kLost);
  }
  {
    // Restarted: the first agent back is paced for the 30 nodes stored.
    Orchestrator brain(o, *temp.store(), clock);
    brain.Start();
    EXPECT_EQ(connect(brain, 0), 15'000);
    brain.Stop();
  }
  {
    // No ceiling: the configured interval whatever the fleet.
    o.max_heartbeats_per_s = 0;
    Orchestrator brain(o, *temp.store(), clock);
    brain.Start();
    EXPECT_EQ(connect(brain, 0), 10'000);
    brain.Stop();
  }
}

}  // namespace
}  // namespace apollo::orchestrator
