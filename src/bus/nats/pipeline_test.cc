// The NATS consumer's pipeline (consumer_worker.h): the next store op is
// submitted while the previous one commits, ops are settled in submission
// order, and a failed op's events are redelivered with nothing lost. A real
// nats-server and a real SQLite store behind FaultyStore.
#include <thread>

#include "bus/testing/faulty_bus_test.h"

namespace apollo::bus::testing {
namespace {

class NatsPipelineTest : public FaultyBusTest {
 protected:
  // Waits (bounded) until the store has seen at least `n` ApplyAsync calls.
  size_t WaitForApplies(size_t n) {
    size_t seen = faulty_->applies().size();
    for (int i = 0; i < 1000 && seen < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      seen = faulty_->applies().size();
    }
    return seen;
  }
};

TEST_P(NatsPipelineTest, TheNextOpGoesToTheStoreWhileThePreviousOneCommits) {
  options_.partitions = 1;  // one partition: order matters between the ops
  OpenFaultyBus();
  const auto tasks = Tasks(6);
  CreateDispatched(tasks, "n1");
  faulty_->hold_applies();  // ops reach the store; their results are withheld
  uint64_t seq = 0;
  auto accepted = bus_->Publish("n1", Batch(tasks, seq, EventType::kAccepted));
  ASSERT_GE(WaitForApplies(1), 1u);
  auto succeeded = bus_->Publish("n1", Batch(tasks, seq, EventType::kSucceeded));
  // Submitted while the first op's result is still withheld. (The first
  // publish itself may complete meanwhile: the second one's look at the
  // store's mark settles events it finds committed.)
  ASSERT_GE(WaitForApplies(2), 2u) << "the consumer waited for the first commit";
  faulty_->release_applies();
  for (auto* f : {&accepted, &succeeded}) ExpectCommitted(*f, tasks.size());
  ExpectAllSucceeded(tasks, seq);
  EXPECT_TRUE(alerts().empty());
}

TEST_P(NatsPipelineTest, AFailedOpIsRedeliveredAndNothingIsLost) {
  OpenFaultyBus();
  const auto tasks = Tasks(8);
  CreateDispatched(tasks, "n1");
  faulty_->fail_next_applies(1);
  uint64_t seq = 0;
  Result<PublishAck> a = PublishWait("n1", Batch(tasks, seq, EventType::kAccepted));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->committed, tasks.size());
  EXPECT_EQ(faulty_->failed(), 1);
  EXPECT_GE(faulty_->applies().size(), 2u) << "the failed op's events were not redelivered";
  Result<PublishAck> s = PublishWait("n1", Batch(tasks, seq, EventType::kSucceeded));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->acked_seq, seq);
  ExpectAllSucceeded(tasks, seq);
  EXPECT_TRUE(alerts().empty());
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Backends, NatsPipelineTest, ::testing::Values(NatsBackend()),
                         [](const auto& info) { return info.param->Name(); });

}  // namespace apollo::bus::testing
