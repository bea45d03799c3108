#include "orchestrator/overload.h"

#include <gtest/gtest.h>

namespace apollo::orchestrator {
namespace {

using std::chrono::seconds;

TEST(CircuitBreakerTest, OpensAfterNFailuresThenHalfOpensAndCloses) {
  ManualClock clock;
  CircuitBreakers b(3, seconds(30));
  EXPECT_TRUE(b.Allow("flaky", clock.Now()));
  EXPECT_FALSE(b.Record("flaky", false, clock.Now()));
  EXPECT_FALSE(b.Record("flaky", false, clock.Now()));
  EXPECT_TRUE(b.Record("flaky", false, clock.Now()));  // third: opens
  EXPECT_FALSE(b.Allow("flaky", clock.Now()));
  EXPECT_TRUE(b.Allow("other", clock.Now()));  // other intents keep flowing
  clock.Advance(seconds(29));
  EXPECT_FALSE(b.Allow("flaky", clock.Now()));
  clock.Advance(seconds(2));
  EXPECT_TRUE(b.Allow("flaky", clock.Now()));   // half-open: one probe
  EXPECT_FALSE(b.Allow("flaky", clock.Now()));  // and only one
  EXPECT_FALSE(b.Record("flaky", true, clock.Now()));
  EXPECT_TRUE(b.Allow("flaky", clock.Now()));   // closed again
  EXPECT_EQ(b.List()[0].state, BreakerState::kClosed);
}

TEST(CircuitBreakerTest, AFailedProbeReopens) {
  ManualClock clock;
  CircuitBreakers b(1, seconds(10));
  EXPECT_TRUE(b.Record("x", false, clock.Now()));
  clock.Advance(seconds(11));
  EXPECT_TRUE(b.Allow("x", clock.Now()));
  EXPECT_TRUE(b.Record("x", false, clock.Now()));  // reopened
  EXPECT_FALSE(b.Allow("x", clock.Now()));
  EXPECT_EQ(b.List()[0].times_opened, 2);
}

TEST(TokenBucketTest, NeverExceedsRatePlusBurst) {
  ManualClock clock;
  TokenBucket bucket(50, 100);
  int granted = 0;
  // 10 simulated seconds, 1,000 attempts per second.
  for (int ms = 0; ms < 10'000; ++ms) {
    granted += bucket.Take(clock.Now()) ? 1 : 0;
    clock.Advance(std::chrono::milliseconds(1));
  }
  EXPECT_LE(granted, 100 + 50 * 10 + 1);
  EXPECT_GE(granted, 100 + 50 * 10 - 2);
  EXPECT_EQ(bucket.taken(), granted);
  EXPECT_EQ(bucket.refused(), 10'000 - granted);
}

TEST(TokenBucketTest, AReserveIsLeftForMoreUrgentCallers) {
  ManualClock clock;
  TokenBucket bucket(1, 10);
  int low = 0;
  while (bucket.Take(clock.Now(), /*keep=*/2.5)) ++low;
  EXPECT_EQ(low, 7);  // stops while 3 tokens are left
  int high = 0;
  while (bucket.Take(clock.Now())) ++high;
  EXPECT_EQ(high, 3);
  EXPECT_EQ(bucket.refused(), 2);
}

TEST(WatermarksTest, AlertPauseAndResumeWithHysteresis) {
  Watermarks w(1000, 0.8, 0.9);
  EXPECT_EQ(w.Update(100), Watermarks::Change::kNone);
  EXPECT_EQ(w.Update(850), Watermarks::Change::kAlert);
  EXPECT_EQ(w.Update(860), Watermarks::Change::kNone);
  EXPECT_FALSE(w.paused());
  EXPECT_EQ(w.Update(950), Watermarks::Change::kPaused);
  EXPECT_TRUE(w.paused());
  EXPECT_EQ(w.Update(850), Watermarks::Change::kNone);  // between: still paused
  EXPECT_TRUE(w.paused());
  EXPECT_EQ(w.Update(700), Watermarks::Change::kResumed);
  EXPECT_FALSE(w.paused());
  EXPECT_FALSE(w.alerting());
}

TEST(WatermarksTest, AnAlertWithoutAPauseIsClearedOnceBelowTheAlertMark) {
  Watermarks w(1000, 0.8, 0.9);
  EXPECT_EQ(w.Update(850), Watermarks::Change::kAlert);
  EXPECT_EQ(w.Update(820), Watermarks::Change::kNone);
  EXPECT_EQ(w.Update(700), Watermarks::Change::kCleared);
  EXPECT_FALSE(w.alerting());
  EXPECT_EQ(w.Update(600), Watermarks::Change::kNone);  // reported once
  EXPECT_EQ(w.Update(850), Watermarks::Change::kAlert);  // and can alert again
}

TEST(WatermarksTest, StraightPastBothMarksIsAPauseThatAlsoAlerts) {
  Watermarks w(1000, 0.8, 0.9);
  EXPECT_EQ(w.Update(100), Watermarks::Change::kNone);
  EXPECT_FALSE(w.alerting());  // the caller raises the alert too (it was not alerting)
  EXPECT_EQ(w.Update(990), Watermarks::Change::kPaused);
  EXPECT_TRUE(w.alerting());
  EXPECT_TRUE(w.paused());
}

}  // namespace
}  // namespace apollo::orchestrator
