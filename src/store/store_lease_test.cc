// The StateStore conformance suite, leases and fences (lease.h): a lease is
// taken only when free or expired, each taking grows the epoch, renewal
// keeps it, and a write fenced by a superseded epoch is refused inside its
// own transaction — also when the new holder is another store object on
// the same database (another replica).
#include <gmock/gmock.h>

#include <set>
#include <thread>

#include "store/testing/store_fixture.h"

namespace apollo::store::testing {
namespace {

using ::testing::HasSubstr;

constexpr auto kTtl = std::chrono::seconds(5);

LeaseClaim Claim(const std::string& who, int64_t epoch) {
  LeaseClaim c;
  c.replica_id = who;
  c.address = who + ".example:7011";
  c.ttl = kTtl;
  c.epoch = epoch;
  return c;
}

// Alert rows of kind "fence_probe" (what the fenced writes below add).
size_t Probes(StateStore& s) {
  Result<std::vector<AlertRow>> alerts = s.ListAlerts(0, 1000);
  EXPECT_TRUE(alerts.ok()) << alerts.status().ToString();
  size_t n = 0;
  for (const AlertRow& a : alerts.ok() ? *alerts : std::vector<AlertRow>{}) {
    n += a.kind == "fence_probe";
  }
  return n;
}

Status Probe(StateStore& s, const Fence* fence) {
  FenceScope scope(fence);
  AlertRow row;
  row.kind = "fence_probe";
  row.detail = fence ? fence->holder : "unfenced";
  return s.AddAlert(row).status();
}

TEST_P(StoreConformanceTest, ALeaseIsTakenOnlyWhenFreeAndEachTakingGrowsTheEpoch) {
  Result<LeaseRow> a = store().ClaimLease(Claim("a", 0));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->holder, "a");
  EXPECT_EQ(a->epoch, 1);
  EXPECT_EQ(a->address, "a.example:7011");
  EXPECT_EQ(a->expires_at, clock_.Now() + kTtl);

  // Held and unexpired: b's claim changes nothing.
  clock_.Advance(std::chrono::seconds(2));
  Result<LeaseRow> b = store().ClaimLease(Claim("b", 0));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->holder, "a");
  EXPECT_EQ(b->epoch, 1);

  // a renews: same epoch, later expiry.
  Result<LeaseRow> renewed = store().ClaimLease(Claim("a", 1));
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(renewed->holder, "a");
  EXPECT_EQ(renewed->epoch, 1);
  EXPECT_EQ(renewed->expires_at, clock_.Now() + kTtl);

  // a stops renewing: once expired, b takes it at epoch 2.
  clock_.Advance(kTtl);
  b = store().ClaimLease(Claim("b", 0));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->holder, "b");
  EXPECT_EQ(b->epoch, 2);
  // a's late renewal finds b's lease and leaves it alone.
  Result<LeaseRow> late = store().ClaimLease(Claim("a", 1));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->holder, "b");
  EXPECT_EQ(late->epoch, 2);

  // Released by b: a takes it at once, epoch 3. A release at a stale epoch
  // changes nothing.
  ASSERT_TRUE(store().ReleaseLease(kLeaderLease, "b", 1).ok());
  EXPECT_EQ(store().ClaimLease(Claim("a", 1))->holder, "b");
  ASSERT_TRUE(store().ReleaseLease(kLeaderLease, "b", 2).ok());
  Result<LeaseRow> again = store().ClaimLease(Claim("a", 1));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->holder, "a");
  EXPECT_EQ(again->epoch, 3);

  Result<ClusterView> view = store().ReadCluster();
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->leases.size(), 1u);
  EXPECT_EQ(view->leases[0].holder, "a");
  EXPECT_EQ(view->leases[0].epoch, 3);
  ASSERT_EQ(view->replicas.size(), 2u);
  std::set<std::string> ids = {view->replicas[0].replica_id, view->replicas[1].replica_id};
  EXPECT_EQ(ids, (std::set<std::string>{"a", "b"}));
  for (const ReplicaRow& r : view->replicas) EXPECT_EQ(r.seen_at, clock_.Now());
}

TEST_P(StoreConformanceTest, AWriteFencedByASupersededEpochIsRefusedAndLeavesNothing) {
  // A second store object on the same database: another replica.
  Result<std::unique_ptr<StateStore>> other = OpenStateStore(url_, options_, clock_);
  ASSERT_TRUE(other.ok()) << other.status().ToString();

  ASSERT_EQ(store().ClaimLease(Claim("a", 0))->epoch, 1);
  const Fence a1{kLeaderLease, "a", 1};
  EXPECT_TRUE(Probe(store(), &a1).ok());
  EXPECT_EQ(Probes(store()), 1u);

  // a is paused past its lease; b takes over through the other store.
  clock_.Advance(kTtl + std::chrono::seconds(1));
  Result<LeaseRow> b = (*other)->ClaimLease(Claim("b", 0));
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->epoch, 2);

  // a wakes and writes at epoch 1: refused by the store, nothing written.
  Status stale = Probe(store(), &a1);
  EXPECT_EQ(stale.code(), StatusCode::kFailedPrecondition) << stale.ToString();
  EXPECT_THAT(stale.message(), HasSubstr("fenced"));
  EXPECT_THAT(stale.message(), HasSubstr("epoch 2, held by b"));
  // A fenced Transition too (the dispatcher's write).
  {
    FenceScope scope(&a1);
    TransitionRequest r = Req("nope", "n1", TaskState::kCancelled, Cause::kCancel);
    Result<std::vector<EventOutcome>> moved = store().Transition({&r, 1});
    EXPECT_EQ(moved.status().code(), StatusCode::kFailedPrecondition);
  }
  EXPECT_EQ(Probes(store()), 1u);

  // The new holder's fenced write, and unfenced writes, go through.
  const Fence b2{kLeaderLease, "b", 2};
  EXPECT_TRUE(Probe(**other, &b2).ok());
  EXPECT_TRUE(Probe(store(), nullptr).ok());
  EXPECT_EQ(Probes(store()), 3u);
}

TEST_P(StoreConformanceTest, FencedAndUnfencedOpsShareABatchWithoutSharingAFate) {
  ASSERT_EQ(store().ClaimLease(Claim("a", 0))->epoch, 1);
  const Fence stale{kLeaderLease, "a", 7};
  // Queued together so the writer may batch them: only the stale one fails.
  std::vector<std::thread> threads;
  std::vector<Status> results(8);
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = Probe(store(), i % 2 == 0 ? &stale : nullptr); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].ok(), i % 2 == 1) << i << ": " << results[i].ToString();
  }
  EXPECT_EQ(Probes(store()), 4u);
}

}  // namespace
}  // namespace apollo::store::testing
