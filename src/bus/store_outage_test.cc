// A store that cannot be reached is not the events' fault: both buses retry
// its events for as long as the outage lasts and park none of them, however
// many deliveries that takes (chaos seed 234913738: a PostgreSQL restart
// parked a valid SUCCEEDED after max_deliver tries in under a second, and
// the store never had it). A commit that keeps failing for another reason
// is still parked at max_deliver. A real SQLite store behind FaultyStore; a
// real nats-server for the JetStream bus.
#include "bus/testing/faulty_bus_test.h"

namespace apollo::bus::testing {
namespace {

using StoreOutageTest = FaultyBusTest;

TEST_P(StoreOutageTest, EventsWaitOutAnOutageLongerThanMaxDeliverAndNoneIsParked) {
  options_.partitions = 1;
  OpenFaultyBus();
  const auto tasks = Tasks(4);
  CreateDispatched(tasks, "n1");
  // Three times max_deliver commits fail as an unreachable store does.
  const int outage = 3 * options_.max_deliver;
  faulty_->fail_next_applies(outage);
  uint64_t seq = 0;
  auto accepted = bus_->Publish("n1", Batch(tasks, seq, EventType::kAccepted));
  ExpectCommitted(accepted, tasks.size());
  EXPECT_EQ(faulty_->failed(), outage) << "the outage ended before max_deliver was passed";
  // Past max_deliver, the waiting events still commit as a batch, not in
  // one commit each (a slow catch-up after every long outage).
  const std::vector<size_t> ops = faulty_->applies();
  ASSERT_GT(ops.size(), static_cast<size_t>(outage));
  EXPECT_LT(ops.size() - outage, tasks.size()) << "applied one event at a time after the outage";
  auto succeeded = bus_->Publish("n1", Batch(tasks, seq, EventType::kSucceeded));
  ExpectCommitted(succeeded, tasks.size());
  ExpectAllSucceeded(tasks, seq);
  Result<std::vector<store::DeadLetter>> letters = store_->ListDeadLetters(0, 10);
  ASSERT_TRUE(letters.ok()) << letters.status().ToString();
  EXPECT_TRUE(letters->empty()) << "parked: " << (*letters)[0].event.event_id() << ": "
                                << (*letters)[0].reason;
  EXPECT_TRUE(alerts().empty());
}

TEST_P(StoreOutageTest, ACommitThatKeepsFailingForAnotherReasonIsParkedAtMaxDeliver) {
  options_.partitions = 1;
  OpenFaultyBus();
  CreateDispatched({"a"}, "n1");
  faulty_->fail_next_applies(1000, StatusCode::kInternal);
  Result<PublishAck> r = PublishWait("n1", {Ev("a", "n1", 1, EventType::kAccepted)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->committed, 0u);
  EXPECT_EQ(r->dead_lettered, 1u);
  faulty_->fail_next_applies(0);
  Result<std::vector<store::DeadLetter>> letters = store_->ListDeadLetters(0, 10);
  ASSERT_TRUE(letters.ok()) << letters.status().ToString();
  ASSERT_EQ(letters->size(), 1u);
  EXPECT_EQ((*letters)[0].event.event_id(), "n1-1");
  EXPECT_EQ((*letters)[0].deliveries, options_.max_deliver);
  EXPECT_NE((*letters)[0].reason.find("injected store failure"), std::string::npos)
      << (*letters)[0].reason;
  ASSERT_EQ(alerts().size(), 1u);
  EXPECT_EQ(alerts()[0].kind, "dead_letter");
}

// Past max_deliver a batch is tried whole first; when that fails other than
// for an outage it is still split, so one failing commit parks one event.
TEST_P(StoreOutageTest, PastMaxDeliverAFailingBatchIsSplitAndOnlyOneEventParked) {
  options_.partitions = 1;
  OpenFaultyBus();
  const auto tasks = Tasks(4);
  CreateDispatched(tasks, "n1");
  // Every delivery up to max_deliver fails, then the whole batch once more,
  // then the first event applied alone.
  faulty_->fail_next_applies(options_.max_deliver + 1, StatusCode::kInternal);
  uint64_t seq = 0;
  Result<PublishAck> r = PublishWait("n1", Batch(tasks, seq, EventType::kAccepted));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->dead_lettered, 1u);
  EXPECT_EQ(r->committed, tasks.size() - 1);
  Result<std::vector<store::DeadLetter>> letters = store_->ListDeadLetters(0, 10);
  ASSERT_TRUE(letters.ok()) << letters.status().ToString();
  ASSERT_EQ(letters->size(), 1u);
  EXPECT_EQ((*letters)[0].deliveries, options_.max_deliver);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreOutageTest,
                         ::testing::Values(EmbeddedBackend(), NatsBackend()),
                         [](const auto& info) { return info.param->Name(); });

}  // namespace
}  // namespace apollo::bus::testing
