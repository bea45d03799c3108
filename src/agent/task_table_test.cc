#include "agent/task_table.h"

#include <gtest/gtest.h>

namespace apollo::agent {
namespace {

Event Ev(const std::string& task, uint32_t attempt, EventType type, uint64_t seq,
         std::string payload = "") {
  Event e;
  e.task_id = task;
  e.node_id = "n1";
  e.attempt = attempt;
  e.type = type;
  e.sequence_number = seq;
  e.payload = std::move(payload);
  return e;
}

TEST(TaskTableTest, ClaimOncePerAttempt) {
  TaskTable t;
  EXPECT_EQ(t.ClaimTask("a", 1, "noop", 0), Claim::kNew);
  EXPECT_EQ(t.ClaimTask("a", 1, "noop", 0), Claim::kAlreadyRunning);
  EXPECT_EQ(t.ClaimTask("a", 2, "noop", 0), Claim::kAlreadyRunning);  // still running
  t.ApplyEvent(Ev("a", 1, EventType::kAccepted, 1));
  t.ApplyEvent(Ev("a", 1, EventType::kFailed, 2, R"({"error":"boom"})"));
  EXPECT_EQ(t.Find("a")->state, TaskState::kFailed);
  EXPECT_EQ(t.Find("a")->error, "boom");
  EXPECT_EQ(t.ClaimTask("a", 1, "noop", 0), Claim::kAlreadyFinished);  // same attempt: done
  EXPECT_EQ(t.ClaimTask("a", 2, "noop", 0), Claim::kNew);              // a retry runs
  t.ApplyEvent(Ev("a", 2, EventType::kAccepted, 3));
  t.ApplyEvent(Ev("a", 2, EventType::kSucceeded, 4, R"({"result":{"x":1}})"));
  EXPECT_EQ(t.ClaimTask("a", 3, "noop", 0), Claim::kAlreadyDone);  // success is final
  EXPECT_EQ(t.Find("a")->result_json, R"({"x":1})");
}

TEST(TaskTableTest, EventsOfAnOlderAttemptAreIgnored) {
  TaskTable t;
  t.ApplyEvent(Ev("a", 2, EventType::kAccepted, 5));
  EXPECT_FALSE(t.ApplyEvent(Ev("a", 1, EventType::kSucceeded, 6)));
  EXPECT_EQ(t.Find("a")->state, TaskState::kRunning);
  EXPECT_EQ(t.Find("a")->attempt, 2u);
}

TEST(TaskTableTest, CheckpointRoundTrip) {
  TaskTable t;
  t.ApplyEvent(Ev("a", 1, EventType::kAccepted, 1, R"({"intent":"noop"})"));
  t.ApplyEvent(Ev("a", 1, EventType::kSucceeded, 2, R"({"result":{"ok":true}})"));
  t.ApplyEvent(Ev("b", 3, EventType::kAccepted, 3));
  TaskTable back;
  ASSERT_TRUE(back.Restore(t.Serialize()).ok());
  ASSERT_NE(back.Find("a"), nullptr);
  EXPECT_EQ(back.Find("a")->state, TaskState::kSucceeded);
  EXPECT_EQ(back.Find("a")->intent, "noop");
  EXPECT_EQ(back.Find("a")->result_json, R"({"ok":true})");
  EXPECT_EQ(back.Find("b")->attempt, 3u);
  EXPECT_EQ(back.Unfinished().size(), 1u);
  EXPECT_EQ(back.Restore("{garbage").code(), StatusCode::kDataLoss);
  EXPECT_EQ(back.size(), 2u);  // a bad checkpoint leaves the table as it was
}

TEST(TaskTableTest, FinishedTasksAreEvictedOldestFirst) {
  TaskTable t(2);
  for (int i = 0; i < 3; ++i) {
    std::string id = std::string("t").append(std::to_string(i));
    t.ApplyEvent(Ev(id, 1, EventType::kAccepted, 2 * i + 1));
    t.ApplyEvent(Ev(id, 1, EventType::kSucceeded, 2 * i + 2));
  }
  t.ApplyEvent(Ev("running", 1, EventType::kAccepted, 10));
  EXPECT_EQ(t.Find("t0"), nullptr);
  EXPECT_NE(t.Find("t1"), nullptr);
  EXPECT_NE(t.Find("t2"), nullptr);
  EXPECT_NE(t.Find("running"), nullptr);
}

}  // namespace
}  // namespace apollo::agent
