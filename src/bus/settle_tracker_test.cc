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

// Two pipelined ops of a node committed in one store transaction: the
// first one's report carries a mark that covers the second's events, which
// must still settle with their own outcome when the second reports (an
// applied SUCCEEDED reported as a duplicate triggered no callback_url).
TEST(SettleTrackerTest, ALaterOpCommittedInTheSameTransactionKeepsItsOutcomes) {
  ManualClock clock;
  SettleTracker tracker(clock);
  auto first = tracker.Register("n1", {5}, std::chrono::seconds(10));
  auto second = tracker.Register("n1", {6}, std::chrono::seconds(10));
  tracker.CommittedAll({{"n1", 5, 6, Outcome::kApplied}});
  ASSERT_EQ(first.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(second.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  tracker.CommittedAll({{"n1", 6, 6, Outcome::kApplied}});
  ASSERT_EQ(second.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  Result<PublishAck> ack = second.get();
  ASSERT_TRUE(ack.ok()) << ack.status().message();
  EXPECT_EQ(ack->acked_seq, 6u);
  ASSERT_EQ(ack->outcomes.size(), 1u);
  EXPECT_EQ(ack->outcomes[0], Outcome::kApplied);
}

// The mirror case: a LOWER seq in an op that reports later. The agent queued
// seq 6 (task B's FAILED) before seq 5 (task A's FAILED) and sent them in two
// batches; the store merged both ops into one transaction, so the first
// report (seq 6) carries mark 6. Seq 5 is still carried by its own op and must
// keep its outcome (swept as a duplicate, the breaker missed a FAILED:
// /tmp/brk repro, breaker CLOSED at 4 of 5).
TEST(SettleTrackerTest, ALowerSeqCarriedByAnOpReportingLaterKeepsItsOutcome) {
  ManualClock clock;
  SettleTracker tracker(clock);
  auto high = tracker.Register("n1", {6}, std::chrono::seconds(10));
  tracker.Carry("n1", 6);
  auto low = tracker.Register("n1", {5}, std::chrono::seconds(10));
  tracker.Carry("n1", 5);
  tracker.CommittedAll({{"n1", 6, 6, Outcome::kApplied}});
  ASSERT_EQ(high.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(low.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  tracker.CommittedAll({{"n1", 5, 6, Outcome::kApplied}});
  ASSERT_EQ(low.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  Result<PublishAck> ack = low.get();
  ASSERT_TRUE(ack.ok()) << ack.status().message();
  EXPECT_EQ(ack->acked_seq, 6u);
  ASSERT_EQ(ack->outcomes.size(), 1u);
  EXPECT_EQ(ack->outcomes[0], Outcome::kApplied);
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

// waiting() counts the waiters not yet settled (a consumer asks every
// round); a settled waiter leaves at once, and its deadline passing later
// completes nothing a second time.
TEST(SettleTrackerTest, WaitingCountsOnlyUnsettledWaiters) {
  ManualClock clock;
  SettleTracker tracker(clock);
  auto a = tracker.Register("n1", {1}, std::chrono::seconds(10));
  auto b = tracker.Register("n1", {2, 3}, std::chrono::seconds(20));
  auto c = tracker.Register("n2", {1}, std::chrono::seconds(5));
  EXPECT_EQ(tracker.waiting(), 3u);
  tracker.CommittedAll({{"n1", 1, 1, Outcome::kApplied}});
  EXPECT_EQ(tracker.waiting(), 2u);
  tracker.CommittedAll({{"n1", 2, 2, Outcome::kApplied}});
  EXPECT_EQ(tracker.waiting(), 2u);         // b still waits for seq 3
  clock.Advance(std::chrono::seconds(11));  // past a's deadline and c's
  tracker.Expire();
  EXPECT_EQ(tracker.waiting(), 1u);
  ASSERT_TRUE(a.get().ok());  // settled before its deadline: stays settled
  Result<PublishAck> late = c.get();
  EXPECT_EQ(late.status().code(), StatusCode::kDeadlineExceeded);
  tracker.CommittedAll({{"n1", 3, 3, Outcome::kApplied}});
  EXPECT_EQ(tracker.waiting(), 0u);
  ASSERT_TRUE(b.get().ok());
  clock.Advance(std::chrono::seconds(60));
  tracker.Expire();
  tracker.FailAll(Status::Unavailable("stopped"));  // nothing left to fail
  EXPECT_EQ(tracker.waiting(), 0u);
}

}  // namespace
}  // namespace apollo::bus
