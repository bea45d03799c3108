// Leadership over a real store (SQLite here: the lease and fence rules are
// the store's, checked on both engines by store_lease_test.cc): one leader
// at a time, a clean stop hands over at once, and a leader whose lease was
// taken is deposed exactly once.
//
// Time is a ManualClock shared by the store and the replicas: a lease
// lapses only when the test moves the clock past it, never because a
// loaded machine (ASan in CI) ran a renewal late. Renewals still come on
// the lease thread's own real-time cadence; the test waits for them.
#include "orchestrator/leadership.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "store/open_store.h"

namespace apollo::orchestrator {
namespace {

using namespace std::chrono_literals;

class LeadershipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/apollo-leadership-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto s = store::OpenStateStore("sqlite://" + dir_ + "/s.db", {}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  struct Counts {
    std::atomic<int> elected{0};
    std::atomic<int> deposed{0};
    std::string why;  // written once, before `deposed` moves
  };
  LeadershipOptions Options(Counts& c) {
    LeadershipOptions o;
    o.ttl = 600ms;  // tried every 200 ms of real time; lapses only by clock_
    o.on_elected = [&c](int64_t) { c.elected++; };
    o.on_deposed = [&c](const std::string& why) {
      c.why = why;
      c.deposed++;
    };
    return o;
  }
  // Polls `pred` for up to 30 s (a renewal is due every ttl / 3).
  template <typename Pred>
  static bool Eventually(Pred pred) {
    for (int i = 0; i < 3000; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return pred();
  }

  // The leader lease as the store has it (holder "" when there is none).
  store::LeaseRow Lease() {
    auto view = store_->ReadCluster();
    EXPECT_TRUE(view.ok()) << view.status().ToString();
    if (view.ok()) {
      for (const store::LeaseRow& l : view->leases) {
        if (l.lease == store::kLeaderLease) return l;
      }
    }
    return {};
  }

  ManualClock clock_;
  std::string dir_;
  std::unique_ptr<store::StateStore> store_;
};

TEST_F(LeadershipTest, OneLeadsTheOtherFollowsAndAStopHandsOver) {
  Counts ca, cb;
  Leadership a(Options(ca), *store_, clock_);
  Leadership b(Options(cb), *store_, clock_);
  a.Start("a", "127.0.0.1:1");
  b.Start("b", "127.0.0.1:2");
  EXPECT_TRUE(a.leader());
  EXPECT_FALSE(b.leader());
  EXPECT_EQ(ca.elected.load(), 1);
  EXPECT_EQ(cb.elected.load(), 0);
  ASSERT_TRUE(a.fence().has_value());
  EXPECT_EQ(a.fence()->epoch, 1);
  EXPECT_EQ(a.fence()->holder, "a");
  EXPECT_FALSE(b.fence().has_value());
  EXPECT_EQ(b.leader_id(), "a");
  EXPECT_EQ(b.leader_address(), "127.0.0.1:1");

  // Renewals keep a leading for several lease lengths: the clock moves
  // half a lease at a time, each time after a's renewal at the time before.
  for (int i = 0; i < 6; ++i) {
    const TimePoint now = clock_.Now();
    ASSERT_TRUE(Eventually([&] { return Lease().renewed_at >= now; })) << "step " << i;
    EXPECT_EQ(Lease().holder, "a");
    clock_.Advance(300ms);
  }
  EXPECT_TRUE(a.leader());
  EXPECT_FALSE(b.leader());
  EXPECT_EQ(Lease().epoch, 1);

  a.Stop();  // releases: b takes over at its next try, not after the ttl
  EXPECT_FALSE(a.leader());
  ASSERT_TRUE(Eventually([&] { return b.leader(); }));
  EXPECT_EQ(b.fence()->epoch, 2);
  // b's thread calls on_elected just after it sets leader(): wait for it.
  ASSERT_TRUE(Eventually([&] { return cb.elected.load() > 0; }));
  EXPECT_EQ(cb.elected.load(), 1);
  EXPECT_EQ(ca.deposed.load(), 0);  // a stop is not a deposition
}

TEST_F(LeadershipTest, ALeaderWhoseLeaseWasTakenIsDeposedOnce) {
  Counts ca;
  Leadership a(Options(ca), *store_, clock_);
  a.Start("a", "127.0.0.1:1");
  ASSERT_TRUE(a.leader());
  // As if a had been paused past its lease: x takes it.
  ASSERT_TRUE(store_->ReleaseLease(store::kLeaderLease, "a", 1).ok());
  store::LeaseClaim x;
  x.replica_id = "x";
  x.ttl = 10s;
  ASSERT_EQ(store_->ClaimLease(x)->holder, "x");
  ASSERT_TRUE(Eventually([&] { return ca.deposed.load() > 0; }));
  EXPECT_FALSE(a.leader());
  EXPECT_FALSE(a.fence().has_value());
  EXPECT_NE(ca.why.find("taken by x at epoch 2"), std::string::npos) << ca.why;
  std::this_thread::sleep_for(500ms);  // past the next try, were there one
  EXPECT_EQ(ca.deposed.load(), 1);
}

TEST_F(LeadershipTest, ALeaderWhoseLeaseSomeoneHeldInBetweenIsDeposedToo) {
  Counts ca;
  Leadership a(Options(ca), *store_, clock_);
  a.Start("a", "127.0.0.1:1");
  ASSERT_TRUE(a.leader());
  // While a was "paused": x took the lease and let it go again, so a's next
  // renewal finds it free and takes it at epoch 3, not at its own 1.
  ASSERT_TRUE(store_->ReleaseLease(store::kLeaderLease, "a", 1).ok());
  store::LeaseClaim x;
  x.replica_id = "x";
  x.ttl = 10s;
  ASSERT_EQ(store_->ClaimLease(x)->epoch, 2);
  ASSERT_TRUE(store_->ReleaseLease(store::kLeaderLease, "x", 2).ok());
  ASSERT_TRUE(Eventually([&] { return ca.deposed.load() > 0; }));
  EXPECT_FALSE(a.leader());
  EXPECT_NE(ca.why.find("then by this one again at epoch 3"), std::string::npos) << ca.why;
}

TEST_F(LeadershipTest, SingleModeLeadsAtOnceWithoutAFence) {
  Counts c;
  LeadershipOptions o = Options(c);
  o.single = true;
  Leadership solo(o, *store_, clock_);
  solo.Start("solo", "127.0.0.1:7011");
  EXPECT_TRUE(solo.leader());
  EXPECT_EQ(c.elected.load(), 1);
  EXPECT_FALSE(solo.fence().has_value());
  EXPECT_EQ(solo.leader_id(), "solo");
  auto view = store_->ReadCluster();
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->leases.empty());  // no lease row in single mode
}

}  // namespace
}  // namespace apollo::orchestrator
