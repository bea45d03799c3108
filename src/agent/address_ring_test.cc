// The agent's walk over orchestrator replicas: next on failure, to the
// named leader when it is listed, and a backoff once a round is spent.
#include "agent/address_ring.h"

#include <gtest/gtest.h>

namespace apollo::agent {
namespace {

TEST(AddressRingTest, OneAddressBacksOffAfterEveryFailure) {
  AddressRing ring({"127.0.0.1:7011"});
  EXPECT_EQ(ring.current(), "127.0.0.1:7011");
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(ring.Failed());
    EXPECT_EQ(ring.current(), "127.0.0.1:7011");
  }
  // A refusal naming an unknown leader changes nothing either.
  EXPECT_FALSE(ring.Failed("10.0.0.9:7011"));
  EXPECT_EQ(ring.current(), "127.0.0.1:7011");
}

TEST(AddressRingTest, EmptyListIsTheDefaultAddress) {
  AddressRing ring({});
  EXPECT_EQ(ring.size(), 1u);
  EXPECT_EQ(ring.current(), "127.0.0.1:7011");
}

TEST(AddressRingTest, WalksInOrderAndBacksOffOncePerRound) {
  AddressRing ring({"a:7011", "b:7011", "c:7011"});
  EXPECT_EQ(ring.current(), "a:7011");
  EXPECT_TRUE(ring.Failed());
  EXPECT_EQ(ring.current(), "b:7011");
  EXPECT_TRUE(ring.Failed());
  EXPECT_EQ(ring.current(), "c:7011");
  EXPECT_FALSE(ring.Failed()) << "every address failed: back off";
  EXPECT_EQ(ring.current(), "a:7011");
  EXPECT_TRUE(ring.Failed()) << "a new round";
  EXPECT_EQ(ring.current(), "b:7011");
}

TEST(AddressRingTest, GoesToTheLeaderARefusalNames) {
  AddressRing ring({"a:7011", "b:7011", "c:7011"});
  EXPECT_TRUE(ring.Failed("c:7011"));
  EXPECT_EQ(ring.current(), "c:7011");
  // Accepted there, later cut off: the next address, a fresh round.
  ring.Reset();
  EXPECT_TRUE(ring.Failed());
  EXPECT_EQ(ring.current(), "a:7011");
  // c failed this round already: not dialled again before the round ends.
  EXPECT_TRUE(ring.Failed("c:7011"));
  EXPECT_EQ(ring.current(), "b:7011");
  EXPECT_FALSE(ring.Failed("c:7011"));
  EXPECT_EQ(ring.current(), "c:7011") << "the next round starts at the named leader";
}

TEST(AddressRingTest, ALeaderNamedTwiceIsNotDialledTwiceInARound) {
  // a and b each name the other (a stale view): c gets its turn, then the
  // round ends instead of bouncing between a and b.
  AddressRing ring({"a:7011", "b:7011", "c:7011"});
  EXPECT_TRUE(ring.Failed("b:7011"));
  EXPECT_EQ(ring.current(), "b:7011");
  EXPECT_TRUE(ring.Failed("a:7011"));
  EXPECT_EQ(ring.current(), "c:7011");
  EXPECT_FALSE(ring.Failed("a:7011"));
  EXPECT_EQ(ring.current(), "a:7011") << "the next round starts at the named leader";
}

TEST(AddressRingTest, UnlistedOrEmptyLeaderMeansTheNextAddress) {
  AddressRing ring({"a:7011", "b:7011"});
  EXPECT_TRUE(ring.Failed("10.0.0.9:7011"));
  EXPECT_EQ(ring.current(), "b:7011");
  EXPECT_FALSE(ring.Failed(""));
  EXPECT_EQ(ring.current(), "a:7011");
}

TEST(AddressRingTest, FindComparesAsHostPort) {
  AddressRing ring({"a:7011", "[::1]:7012", "not an address"});
  EXPECT_EQ(ring.Find("a:7011").value_or(99), 0u);
  EXPECT_EQ(ring.Find("[::1]:7012").value_or(99), 1u);
  EXPECT_EQ(ring.Find("not an address").value_or(99), 2u);
  EXPECT_FALSE(ring.Find("a:7012").has_value());
  EXPECT_FALSE(ring.Find("").has_value());
}

}  // namespace
}  // namespace apollo::agent
