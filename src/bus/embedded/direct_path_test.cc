// The embedded bus's direct path (src/bus/README.md "Embedded: the direct
// path"): a publish whose partitions hold nothing pending is ONE store op; a
// failed direct op is retried through the partition path, nothing lost; lag
// counts direct events in flight. A real SQLite store behind FaultyStore.
#include <thread>

#include "bus/testing/faulty_bus_test.h"

namespace apollo::bus::testing {
namespace {

class EmbeddedBusDirectPathTest : public FaultyBusTest {
 protected:
  uint64_t Pending() {
    auto lag = bus_->Lag();
    EXPECT_TRUE(lag.ok());
    uint64_t n = 0;
    for (const auto& l : *lag) n += l.pending;
    return n;
  }
  // Pending events once (bounded wait) it reached 0. A publish may complete
  // a moment before the bus counts its last events applied: the tracker
  // settles every event at or below the node's mark as soon as any commit
  // reports it, while another op's completion is still being counted.
  uint64_t PendingAfterSettling() {
    uint64_t n = Pending();
    for (int i = 0; i < 100 && n > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      n = Pending();
    }
    return n;
  }
};

TEST_P(EmbeddedBusDirectPathTest, APublishOnIdlePartitionsIsOneStoreOp) {
  options_.partitions = 16;
  OpenFaultyBus();
  const auto tasks = Tasks(32);  // spread over the 16 partitions, 4 workers
  CreateDispatched(tasks, "n1");
  uint64_t seq = 0;
  for (EventType k : {EventType::kAccepted, EventType::kSucceeded}) {
    Result<PublishAck> r = PublishWait("n1", Batch(tasks, seq, k));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->committed, tasks.size());
    EXPECT_EQ(r->acked_seq, seq);
  }
  EXPECT_EQ(faulty_->applies(), (std::vector<size_t>{32, 32}));
  for (const std::string& t : tasks) EXPECT_EQ(StateOf(t, "n1"), TaskState::kSucceeded) << t;
  EXPECT_EQ(PendingAfterSettling(), 0u);
}

TEST_P(EmbeddedBusDirectPathTest, LagCountsDirectEventsInFlight) {
  OpenFaultyBus();
  const auto tasks = Tasks(6);
  CreateDispatched(tasks, "n1");
  faulty_->hold_applies();  // the store commits; the bus does not hear of it yet
  uint64_t seq = 0;
  auto f = bus_->Publish("n1", Batch(tasks, seq, EventType::kAccepted));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(faulty_->applies(), (std::vector<size_t>{6}));
  EXPECT_NE(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  auto lag = bus_->Lag();
  ASSERT_TRUE(lag.ok());
  uint64_t pending = 0;
  for (const auto& l : *lag) {
    pending += l.pending;
    if (l.pending > 0) {
      EXPECT_GE(l.oldest_unapplied_age, std::chrono::milliseconds(150)) << l.partition;
    }
  }
  EXPECT_EQ(pending, 6u);
  faulty_->release_applies();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  Result<PublishAck> r = f.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->acked_seq, 6u);
  EXPECT_EQ(PendingAfterSettling(), 0u);
  lag = bus_->Lag();
  ASSERT_TRUE(lag.ok());
  for (const auto& l : *lag) {
    EXPECT_EQ(l.published, l.applied);
    EXPECT_EQ(l.oldest_unapplied_age.count(), 0);
  }
}

TEST_P(EmbeddedBusDirectPathTest, AFailedDirectOpIsRetriedInOrderAndNothingIsLost) {
  options_.partitions = 4;
  OpenFaultyBus();
  const auto tasks = Tasks(8);
  CreateDispatched(tasks, "n1");
  // The direct op fails; its events go to the partition path, whose retry
  // ops are held in flight.
  faulty_->hold_applies();
  faulty_->fail_next_applies(1);
  uint64_t seq = 0;
  auto accepted = bus_->Publish("n1", Batch(tasks, seq, EventType::kAccepted));
  size_t retried = 0;
  for (int i = 0; i < 500 && retried < tasks.size(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto a = faulty_->applies();
    retried = 0;
    for (size_t k = 1; k < a.size(); ++k) retried += a[k];
  }
  ASSERT_EQ(retried, tasks.size()) << "the failed op's events were not retried";
  EXPECT_EQ(faulty_->failed(), 1);
  // Their partitions are busy: a later publish queues behind the retries
  // instead of going to the store directly.
  const size_t ops_before = faulty_->applies().size();
  auto succeeded = bus_->Publish("n1", Batch(tasks, seq, EventType::kSucceeded));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(faulty_->applies().size(), ops_before);
  EXPECT_EQ(Pending(), 2 * tasks.size());
  faulty_->release_applies();
  for (auto* f : {&accepted, &succeeded}) ExpectCommitted(*f, tasks.size());
  ExpectAllSucceeded(tasks, seq);
  EXPECT_EQ(PendingAfterSettling(), 0u);
  EXPECT_TRUE(alerts().empty());
}

TEST_P(EmbeddedBusDirectPathTest, PoisonBesideHealthyEventsIsParkedAloneAndTheRestIsOneOp) {
  options_.partitions = 4;
  OpenFaultyBus();
  const auto tasks = Tasks(8);
  CreateDispatched(tasks, "n1");
  uint64_t seq = 0;
  std::vector<Event> batch = Batch(tasks, seq, EventType::kAccepted);
  batch.push_back(Ev("ghost", "n1", ++seq, EventType::kAccepted));
  Result<PublishAck> r = PublishWait("n1", std::move(batch));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->committed, tasks.size());
  EXPECT_EQ(r->dead_lettered, 1u);
  ASSERT_FALSE(faulty_->applies().empty());
  EXPECT_EQ(faulty_->applies().front(), tasks.size());  // the ghost never reached the store
  for (const std::string& t : tasks) EXPECT_EQ(StateOf(t, "n1"), TaskState::kRunning) << t;
  ASSERT_EQ(alerts().size(), 1u);
  EXPECT_EQ(alerts()[0].task_id, "ghost");
  EXPECT_EQ(PendingAfterSettling(), 0u);
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Backends, EmbeddedBusDirectPathTest, ::testing::Values(EmbeddedBackend()),
                         [](const auto& info) { return info.param->Name(); });

}  // namespace apollo::bus::testing
