#include "orchestrator/metrics/metered_store.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

using namespace std::chrono_literals;

class MeteredStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(temp_.store(), nullptr); }

  void Create(const std::string& id) {
    TaskSpec s;
    s.task_id = id;
    s.intent = "noop";
    s.target_selector.type = SelectorType::kNodes;
    s.target_selector.nodes = {"n1"};
    s.timeout = 60s;
    std::vector<store::NewTask> tasks = {{s, {"n1"}}};
    ASSERT_TRUE(store_.CreateTasks(tasks).ok());
  }
  store::EventOutcome Move(const std::string& id, TaskState to, store::Cause cause) {
    store::TransitionRequest r;
    r.task_id = id;
    r.node_id = "n1";
    r.to = to;
    r.cause = cause;
    if (to == TaskState::kDispatched) r.ack_deadline = clock_.Now() + 10s;
    auto o = store_.Transition({&r, 1});
    EXPECT_TRUE(o.ok()) << o.status().ToString();
    return o.ok() ? o->at(0) : store::EventOutcome{};
  }
  void Report(const std::string& id, EventType type) {
    Event e;
    e.task_id = id;
    e.node_id = "n1";
    e.sequence_number = ++seq_;
    e.attempt = 1;
    e.type = type;
    e.timestamp = clock_.Now();
    auto r = store_.Apply({e});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  // The value of the sample `series` (name{labels} as the text format
  // writes it), or -1 when it is not there.
  double Sample(const std::string& series) {
    std::string text = prometheus::TextSerializer().Serialize(metrics_.registry().Collect());
    size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }

  ManualClock clock_;
  testing::TempStore temp_{clock_};
  OrchestratorMetrics metrics_;
  MeteredStore store_{*temp_.store(), metrics_, clock_};
  uint64_t seq_ = 0;
};

TEST_F(MeteredStoreTest, CountsEachCommittedChangeByFromToAndCause) {
  Create("t1");
  Create("t1");  // the same task again: created = false, nothing counted
  EXPECT_EQ(Sample(R"(apollo_transitions_total{cause="create",from="NONE",to="PENDING"})"), 1);
  Move("t1", TaskState::kDispatched, store::Cause::kDispatch);
  Report("t1", EventType::kAccepted);
  Report("t1", EventType::kSucceeded);
  EXPECT_EQ(Sample(R"(apollo_transitions_total{cause="dispatch",from="PENDING",to="DISPATCHED"})"),
            1);
  EXPECT_EQ(Sample(R"(apollo_transitions_total{cause="event",from="DISPATCHED",to="RUNNING"})"), 1);
  EXPECT_EQ(Sample(R"(apollo_transitions_total{cause="event",from="RUNNING",to="SUCCEEDED"})"), 1);
  EXPECT_EQ(Sample(R"(apollo_ingest_events_total{outcome="applied"})"), 2);
  EXPECT_EQ(Sample("apollo_ingest_batch_events_count"), 2);
  EXPECT_EQ(Sample(R"(apollo_store_commit_seconds_count{op="transition"})"), 1);
  EXPECT_EQ(Sample(R"(apollo_store_commit_seconds_count{op="apply"})"), 2);
}

TEST_F(MeteredStoreTest, RefusedChangesAreNotCounted) {
  Create("t1");
  // PENDING -> SUCCEEDED is illegal: refused by the store, not a transition.
  EXPECT_EQ(Move("t1", TaskState::kSucceeded, store::Cause::kOperator).outcome,
            store::Outcome::kIllegalTransition);
  EXPECT_EQ(Sample(R"(apollo_transitions_total{cause="operator",from="PENDING",to="SUCCEEDED"})"),
            -1);
  Report("t1", EventType::kAccepted);  // not dispatched: refused too
  EXPECT_EQ(Sample(R"(apollo_transitions_total{cause="event",from="PENDING",to="RUNNING"})"), -1);
}

TEST_F(MeteredStoreTest, MeasuresSubmitToRunningAndDispatchToAckOnTheInjectedClock) {
  Create("t1");
  clock_.Advance(3s);
  Move("t1", TaskState::kDispatched, store::Cause::kDispatch);
  clock_.Advance(2s);
  Report("t1", EventType::kAccepted);
  EXPECT_EQ(Sample("apollo_dispatch_to_ack_seconds_count"), 1);
  EXPECT_DOUBLE_EQ(Sample("apollo_dispatch_to_ack_seconds_sum"), 2);
  EXPECT_EQ(Sample("apollo_submit_to_running_seconds_count"), 1);
  EXPECT_DOUBLE_EQ(Sample("apollo_submit_to_running_seconds_sum"), 5);
  EXPECT_EQ(Sample(R"(apollo_submit_to_running_seconds_bucket{le="5"})"), 1);
  EXPECT_EQ(Sample(R"(apollo_submit_to_running_seconds_bucket{le="2.5"})"), 0);
  EXPECT_EQ(store_.tracked(), 0u);  // acknowledged and running: nothing left
}

TEST_F(MeteredStoreTest, ARowThatEndsWithoutRunningLeavesTheTables) {
  Create("t1");
  Move("t1", TaskState::kCancelled, store::Cause::kCancel);
  EXPECT_EQ(store_.tracked(), 0u);
  EXPECT_EQ(Sample("apollo_submit_to_running_seconds_count"), 0);
}

}  // namespace
}  // namespace apollo::orchestrator
