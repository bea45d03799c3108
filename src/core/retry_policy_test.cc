#include "core/retry_policy.h"

#include <vector>

#include <gtest/gtest.h>

namespace apollo {
namespace {

using std::chrono::seconds;

std::vector<int64_t> Sequence(const RetryPolicy& p, int n) {
  std::vector<int64_t> out;
  for (int i = 1; i <= n; ++i) {
    out.push_back(std::chrono::duration_cast<seconds>(p.BaseDelay(i)).count());
  }
  return out;
}

TEST(RetryPolicyTest, ExponentialDoublesUpToTheCap) {
  RetryPolicy p{6, seconds(5), seconds(60), Backoff::kExponential, false, {}};
  EXPECT_EQ(Sequence(p, 6), (std::vector<int64_t>{5, 10, 20, 40, 60, 60}));
}

TEST(RetryPolicyTest, FixedIsConstant) {
  RetryPolicy p{4, seconds(7), seconds(60), Backoff::kFixed, false, {}};
  EXPECT_EQ(Sequence(p, 4), (std::vector<int64_t>{7, 7, 7, 7}));
}

TEST(RetryPolicyTest, HugeAttemptNumbersDoNotOverflow) {
  RetryPolicy p{100, seconds(1), seconds(3600), Backoff::kExponential, false, {}};
  EXPECT_EQ(p.BaseDelay(1'000'000), seconds(3600));
  EXPECT_EQ(p.BaseDelay(64), seconds(3600));
  RetryPolicy zero{3, seconds(0), seconds(0), Backoff::kExponential, false, {}};
  EXPECT_EQ(zero.BaseDelay(50), seconds(0));
}

TEST(RetryPolicyTest, FullJitterStaysWithinBoundsAndIsReproducible) {
  RetryPolicy p{5, seconds(5), seconds(60), Backoff::kExponential, true, {}};
  Rng a(42), b(42);
  bool varied = false;
  Duration first{-1};
  for (int i = 0; i < 200; ++i) {
    Duration d = p.DelayBeforeRetry(3, &a);
    EXPECT_GE(d.count(), 0);
    EXPECT_LE(d, Duration(seconds(20)));
    EXPECT_EQ(d, p.DelayBeforeRetry(3, &b));  // same seed, same delays
    if (first.count() < 0) first = d;
    varied = varied || d != first;
  }
  EXPECT_TRUE(varied) << "jitter produced a constant";
}

TEST(RetryPolicyTest, SeedTiers) {
  RetryPolicy fast = RetryPolicy::Fast();
  EXPECT_EQ(fast.max_retries, 3);
  EXPECT_EQ(Sequence(fast, 3), (std::vector<int64_t>{5, 5, 5}));
  RetryPolicy slow = RetryPolicy::Slow();
  EXPECT_EQ(slow.max_retries, 5);
  EXPECT_EQ(Sequence(slow, 5), (std::vector<int64_t>{60, 60, 60, 60, 60}));
  EXPECT_EQ(RetryPolicy::Preset("fast"), fast);
  EXPECT_EQ(RetryPolicy::Preset("slow"), slow);
  EXPECT_EQ(RetryPolicy::Preset("none")->max_retries, 0);
  EXPECT_EQ(RetryPolicy::Preset("medium"), std::nullopt);
}

TEST(RetryPolicyTest, DecideRetryUntilExhausted) {
  RetryPolicy p{3, seconds(5), seconds(60), Backoff::kExponential, false, {}};
  std::vector<int64_t> delays;
  int used = 0;
  for (;;) {
    RetryDecision d = DecideRetry(p, used, nullptr);
    if (!d.retry) break;
    EXPECT_EQ(d.retry_number, used + 1);
    delays.push_back(std::chrono::duration_cast<seconds>(d.delay).count());
    ++used;
    ASSERT_LE(used, 10);
  }
  EXPECT_EQ(used, 3);
  EXPECT_EQ(delays, (std::vector<int64_t>{5, 10, 20}));
  EXPECT_TRUE(p.Exhausted(3));
  EXPECT_FALSE(p.Exhausted(2));
  EXPECT_FALSE(DecideRetry(RetryPolicy{0, seconds(1), seconds(1), Backoff::kFixed, false, {}}, 0, nullptr).retry);
}

TEST(RetryPolicyTest, BackoffNames) {
  EXPECT_EQ(ParseBackoff("exponential"), Backoff::kExponential);
  EXPECT_EQ(ParseBackoff("fixed"), Backoff::kFixed);
  EXPECT_EQ(ParseBackoff("linear"), std::nullopt);
  EXPECT_EQ(BackoffName(Backoff::kFixed), "fixed");
}

}  // namespace
}  // namespace apollo

namespace apollo {
namespace {

TEST(RetryTiersTest, EscalateFromTierToTierThenStop) {
  RetryPolicy p = RetryPolicy::Tiered({RetryPolicy::Fast().AsTier("fast"),
                                       RetryPolicy::Slow().AsTier("slow")});
  EXPECT_EQ(p.max_retries, 8);
  std::vector<std::string> tiers;
  std::vector<int64_t> delays;
  for (int used = 0; used < 8; ++used) {
    RetryDecision d = DecideRetry(p, used, nullptr);
    ASSERT_TRUE(d.retry) << used;
    EXPECT_EQ(d.retry_number, used + 1);
    tiers.push_back(d.tier + "#" + std::to_string(d.tier_retry) + "/" +
                    std::to_string(d.tier_retries));
    delays.push_back(std::chrono::duration_cast<std::chrono::seconds>(d.delay).count());
  }
  EXPECT_EQ(tiers, (std::vector<std::string>{"fast#1/3", "fast#2/3", "fast#3/3", "slow#1/5",
                                             "slow#2/5", "slow#3/5", "slow#4/5", "slow#5/5"}));
  EXPECT_EQ(delays, (std::vector<int64_t>{5, 5, 5, 60, 60, 60, 60, 60}));
  EXPECT_FALSE(DecideRetry(p, 8, nullptr).retry);  // then FAILED for a person
}

TEST(RetryTiersTest, AnUntieredPolicyIsOneUnnamedTier) {
  RetryPolicy p{2, std::chrono::seconds(1), std::chrono::seconds(4), Backoff::kExponential,
                false, {}};
  RetryDecision d = DecideRetry(p, 1, nullptr);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.tier, "");
  EXPECT_EQ(d.tier_retry, 2);
  EXPECT_EQ(d.delay, std::chrono::seconds(2));
  EXPECT_FALSE(DecideRetry(p, 2, nullptr).retry);
}

}  // namespace
}  // namespace apollo
