// apollo-cli cluster status: the replica roles, the lease line, single mode,
// the JSON shape, and the command's wiring. tests/e2e/replicas_test.sh runs
// it against real replicas.
#include "cli/cluster_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/testing/cli_fixture.h"

namespace apollo::cli::test_support {
namespace {

using ::testing::StartsWith;

constexpr int64_t kNoon = 1'712'318'400'000;  // 2024-04-05T12:00:00Z, in ms
constexpr int64_t kNow = kNoon + 5'000;
constexpr int64_t kTtl = 5'000;

v1::ReplicaStatus Replica(const std::string& id, const std::string& address, int64_t started,
                          int64_t seen, bool leader) {
  v1::ReplicaStatus r;
  r.set_replica_id(id);
  r.set_address(address);
  r.set_started_at_ms(started);
  r.set_seen_at_ms(seen);
  r.set_leader(leader);
  return r;
}

// a leads, b follows (and answered), c stopped three minutes ago.
v1::ClusterStatusResponse ThreeReplicas() {
  v1::ClusterStatusResponse resp;
  resp.set_mode("replicated");
  resp.set_answered_by("b");
  resp.set_answered_by_leader(false);
  resp.set_now_ms(kNow);
  resp.set_lease_ttl_ms(kTtl);
  v1::LeaseStatus* l = resp.add_leases();
  l->set_name("leader");
  l->set_holder("a");
  l->set_address("127.0.0.1:7011");
  l->set_epoch(3);
  l->set_acquired_at_ms(kNoon + 1'000);
  l->set_renewed_at_ms(kNow - 800);
  l->set_expires_at_ms(kNow + 4'200);
  *resp.add_replicas() = Replica("a", "127.0.0.1:7011", kNoon, kNow - 800, true);
  *resp.add_replicas() = Replica("b", "127.0.0.1:7012", kNoon, kNow - 1'100, false);
  *resp.add_replicas() = Replica("c", "127.0.0.1:7013", kNoon - 60'000, kNow - 180'000, false);
  return resp;
}

TEST(CliClusterViews, RoleIsLeaderFollowerOrGoneAfterThreeLeases) {
  EXPECT_EQ(ReplicaRole(Replica("a", "x:1", kNoon, kNow - 3 * kTtl, false), kNow, kTtl),
            "follower");
  EXPECT_EQ(ReplicaRole(Replica("a", "x:1", kNoon, kNow - 3 * kTtl - 1, false), kNow, kTtl),
            "gone");
  // The lease decides leadership, whatever the replica's own row says.
  EXPECT_EQ(ReplicaRole(Replica("a", "x:1", kNoon, kNow - 10 * kTtl, true), kNow, kTtl), "leader");
  // No lease length known: never "gone".
  EXPECT_EQ(ReplicaRole(Replica("a", "x:1", kNoon, kNow - 10 * kTtl, false), kNow, 0), "follower");
}

TEST(CliClusterViews, TextShowsTheLeaseAndEveryReplica) {
  EXPECT_EQ(
      ClusterStatusText(ThreeReplicas()),
      "mode replicated, lease ttl 5s; answered by b (follower)\n"
      "leader lease: a at 127.0.0.1:7011, epoch 3, acquired 12:00:01, renewed 0.8s ago, "
      "expires in 4.2s\n"
      "REPLICA  ADDRESS         ROLE      STARTED   LAST SEEN\n"
      "a        127.0.0.1:7011  leader    12:00:00  0.8s ago\n"
      "b        127.0.0.1:7012  follower  12:00:00  1.1s ago\n"
      "c        127.0.0.1:7013  gone      11:59:00  3m ago (not seen for > 3 lease lengths)\n");
}

TEST(CliClusterViews, ExpiredLeaseAndAnotherDay) {
  v1::ClusterStatusResponse resp = ThreeReplicas();
  resp.set_answered_by_leader(true);
  resp.mutable_leases(0)->set_expires_at_ms(kNow - 1'000);
  resp.mutable_replicas(2)->set_started_at_ms(kNoon - 86'400'000);
  std::string text = ClusterStatusText(resp);
  EXPECT_THAT(text, StartsWith("mode replicated, lease ttl 5s; answered by b (leader)\n"
                               "leader lease: a at 127.0.0.1:7011, epoch 3, acquired 12:00:01, "
                               "renewed 0.8s ago, expired 1.0s ago: no one holds it\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("gone      2024-04-04 12:00:00  3m ago"));

  resp.clear_leases();
  resp.clear_replicas();
  EXPECT_EQ(ClusterStatusText(resp),
            "mode replicated, lease ttl 5s; answered by b (leader)\n"
            "leader lease: never held\n"
            "no replica has registered in the store yet\n");
}

TEST(CliClusterViews, SingleModeSaysThereIsNoLease) {
  v1::ClusterStatusResponse resp;
  resp.set_mode("single");
  resp.set_answered_by("main");
  resp.set_answered_by_leader(true);
  resp.set_now_ms(kNow);
  EXPECT_EQ(ClusterStatusText(resp),
            "mode single (SQLite: one orchestrator, no lease); replica main\n");
}

TEST(CliClusterViews, JsonShape) {
  nlohmann::json j = ClusterStatusToJson(ThreeReplicas());
  EXPECT_EQ(j["mode"], "replicated");
  EXPECT_EQ(j["answered_by"], "b");
  EXPECT_EQ(j["answered_by_leader"], false);
  EXPECT_EQ(j["lease_ttl_ms"], kTtl);
  EXPECT_EQ(j["now"], "2024-04-05T12:00:05.000000Z");
  ASSERT_EQ(j["leases"].size(), 1u);
  EXPECT_EQ(j["leases"][0]["holder"], "a");
  EXPECT_EQ(j["leases"][0]["epoch"], 3);
  EXPECT_EQ(j["leases"][0]["acquired_at"], "2024-04-05T12:00:01.000000Z");
  EXPECT_EQ(j["leases"][0]["expired"], false);
  ASSERT_EQ(j["replicas"].size(), 3u);
  EXPECT_EQ(j["replicas"][0]["leader"], true);
  EXPECT_EQ(j["replicas"][1]["leader"], false);
  EXPECT_EQ(j["replicas"][0]["role"], "leader");
  EXPECT_EQ(j["replicas"][1]["role"], "follower");
  EXPECT_EQ(j["replicas"][2]["role"], "gone");
  EXPECT_EQ(j["replicas"][2]["started_at"], "2024-04-05T11:59:00.000000Z");
}

// The command is wired: the fake predates ClusterStatus, so it answers
// UNIMPLEMENTED, worded as for any server that lacks a request.
TEST_F(CliCommandsTest, ClusterStatusAsksTheServer) {
  CliRun r = Cli({"cluster", "status"});
  ExpectOneErrorLine(r);
  EXPECT_THAT(r.err, StartsWith("apollo-cli: the orchestrator at " + addr_ +
                                " does not support this request"));
}

}  // namespace
}  // namespace apollo::cli::test_support
