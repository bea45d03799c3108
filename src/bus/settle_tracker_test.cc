#include "bus/settle_tracker.h"

#include <gtest/gtest.h>

namespace apollo::bus {
namespace {

using store::Outcome;

// One store op applied two events of a node; the node's mark after it covers
// both. Each must keep its own outcome: the orchestrator counts applied
// FAILEDs for its circuit breaker (e2e_overload_test once saw the breaker stay
// shut because the second FAILED came back as a duplicate).
TEST(SettleTrackerTest, EventsOfOneOpKeepTheirOwnOutcomes) {
  ManualClock clock;
  SettleTracker tracker(clock);
  auto f = tracker.Register("n1", {1, 2, 3}, std::chrono::seconds(10));
  tracker.CommittedAll({{"n1", 1, 3, Outcome::kApplied},
                        {"n1", 2, 3, Outcome::kApplied},
                        {"n1", 3, 3, Outcome::kStaleAttempt}});
  ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  Result<PublishAck> ack = f.get();
  ASSERT_TRUE(ack.ok()) << ack.status().message();
  EXPECT_EQ(ack->acked_seq, 3u);
  ASSERT_EQ(ack->outcomes.size(), 3u);
  EXPECT_EQ(ack->outcomes[0], Outcome::kApplied);
  EXPECT_EQ(ack->outcomes[1], Outcome::kApplied);
  EXPECT_EQ(ack->outcomes[2], Outcome::kStaleAttempt);
}

// What the mark is for: events the store already had (committed by an
// earlier consumer that died before its ack) settle as duplicates.
TEST(SettleTrackerTest, EventsBelowTheMarkNotReportedSettleAsDuplicates) {
  ManualClock clock;
  SettleTracker tracker(clock);
  auto f = tracker.Register("n1", {4, 5}, std::chrono::seconds(10));
  tracker.CommittedAll({{"n1", 5, 5, Outcome::kApplied}});
  ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  Result<PublishAck> ack = f.get();
  ASSERT_TRUE(ack.ok());
  ASSERT_EQ(ack->outcomes.size(), 2u);
  EXPECT_EQ(ack->outcomes[0], Outcome::kDuplicate);
  EXPECT_EQ(ack->outcomes[1], Outcome::kApplied);
}

}  // namespace
}  // namespace apollo::bus
