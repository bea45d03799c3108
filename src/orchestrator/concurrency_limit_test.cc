#include "orchestrator/concurrency_limit.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace apollo::orchestrator {
namespace {

TEST(ConcurrencyLimitTest, RefusesPastCapacityAndFreesOnRelease) {
  ConcurrencyLimit limit(2);
  auto a = limit.TryAcquire();
  auto b = limit.TryAcquire();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(limit.TryAcquire());
  EXPECT_EQ(limit.in_use(), 2);
  EXPECT_EQ(limit.refused(), 1);
  a.reset();  // the lease's destructor gives the slot back
  EXPECT_EQ(limit.in_use(), 1);
  auto c = limit.TryAcquire();
  EXPECT_TRUE(c);
  EXPECT_EQ(limit.in_use(), 2);
}

TEST(ConcurrencyLimitTest, AMovedLeaseReleasesOnce) {
  ConcurrencyLimit limit(1);
  {
    auto a = limit.TryAcquire();
    ASSERT_TRUE(a);
    ConcurrencyLimit::Lease moved = std::move(*a);
    a.reset();  // moved from: releases nothing
    EXPECT_EQ(limit.in_use(), 1);
  }
  EXPECT_EQ(limit.in_use(), 0);
}

TEST(ConcurrencyLimitTest, NeverMoreThanCapacityUnderContention) {
  ConcurrencyLimit limit(3);
  std::atomic<int> held{0}, peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        auto lease = limit.TryAcquire();
        if (!lease) continue;
        int now = held.fetch_add(1) + 1;
        int p = peak.load();
        while (now > p && !peak.compare_exchange_weak(p, now)) {
        }
        held.fetch_sub(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 3);
  EXPECT_EQ(limit.in_use(), 0);
}

}  // namespace
}  // namespace apollo::orchestrator
