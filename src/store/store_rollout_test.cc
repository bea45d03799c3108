// The StateStore conformance suite, rollouts: rows wait for their batch,
// a batch opens only by UpdateRollout (compare-and-set), a dependency
// release respects the batch gate, and everything survives a reopen.
#include <gmock/gmock.h>

#include "store/testing/store_fixture.h"

namespace apollo::store::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

std::vector<std::string> DueNodes(StateStore& s, TimePoint now, const std::string& task) {
  std::vector<std::string> out;
  Result<std::vector<DueItem>> due = s.DueWork(now, 100);
  EXPECT_TRUE(due.ok()) << due.status().ToString();
  if (!due.ok()) return out;
  for (const DueItem& d : *due) {
    if (d.task_id == task && d.kind == DueKind::kDispatch) out.push_back(d.node_id);
  }
  return out;
}

// `s` changed in batches of 2 after a canary of 1.
TaskSpec WithRollout(TaskSpec s) {
  RolloutSpec r;
  r.batch_size = 2;
  r.canary = 1;
  s.rollout = r;
  return s;
}

TEST_P(StoreConformanceTest, RolloutRowsWaitForTheirBatch) {
  const std::vector<std::string> nodes = {"n1", "n2", "n3", "n4", "n5"};
  for (const auto& n : nodes) {
    ASSERT_TRUE(store().UpsertNode({n, {}, {}, {}, "normal", "1.0", clock_.Now(), true, {}}).ok());
  }
  // Dispatch on create is asked for every node: only the canary gets it.
  NewTask t{WithRollout(Spec("roll", nodes)), nodes, std::chrono::seconds(60), nodes,
            clock_.Now() + std::chrono::seconds(10)};
  Result<std::vector<CreatedTask>> created = store().CreateTasks({&t, 1});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_THAT(created->at(0).dispatched, ElementsAre("n1"));

  Result<TaskRow> task = store().GetTask("roll");
  ASSERT_TRUE(task.ok());
  ASSERT_TRUE(task->rollout.has_value());
  EXPECT_EQ(task->rollout->state, RolloutState::kRunning);
  EXPECT_EQ(task->rollout->open_batch, 1);
  EXPECT_EQ(task->rollout->batches, 3);
  std::vector<std::pair<int, std::string>> plan;
  for (const NodeRow& r : task->nodes) plan.emplace_back(r.batch, r.blocked_reason);
  EXPECT_THAT(plan, ElementsAre(::testing::Pair(1, ::testing::StartsWith("awaiting_ack")),
                                std::pair(2, "rollout_waiting batch 2"),
                                std::pair(2, "rollout_waiting batch 2"),
                                std::pair(3, "rollout_waiting batch 3"),
                                std::pair(3, "rollout_waiting batch 3")));
  EXPECT_TRUE(DueNodes(store(), clock_.Now(), "roll").empty());
  EXPECT_EQ(Row("roll", "n2").start_deadline, std::nullopt);  // its clock has not started

  // A stale version is refused; the right one opens batch 2 only.
  RolloutChange open{"roll",       99, RolloutState::kRunning, 2, "", "",
                     std::nullopt, 0,  Cause::kRollout,        ""};
  EXPECT_EQ(store().UpdateRollout(open).code(), StatusCode::kFailedPrecondition);
  open.expected_version = task->rollout->version;
  ASSERT_TRUE(store().UpdateRollout(open).ok());
  EXPECT_THAT(DueNodes(store(), clock_.Now(), "roll"), UnorderedElementsAre("n2", "n3"));
  EXPECT_EQ(Row("roll", "n2").start_deadline, clock_.Now() + std::chrono::seconds(60));
  EXPECT_EQ(Row("roll", "n4").blocked_reason, "rollout_waiting batch 3");

  // A pause is one entry about the task; it survives a restart.
  RolloutChange pause{"roll",
                      task->rollout->version + 1,
                      RolloutState::kPaused,
                      2,
                      "alice",
                      "checking the canary's logs",
                      std::nullopt,
                      0,
                      Cause::kRollout,
                      "paused by alice: checking the canary's logs"};
  ASSERT_TRUE(store().UpdateRollout(pause).ok());
  Reopen();
  Result<std::vector<RolloutRow>> active = store().ListRollouts(true);
  ASSERT_TRUE(active.ok());
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ(active->at(0).state, RolloutState::kPaused);
  EXPECT_EQ(active->at(0).paused_by, "alice");
  EXPECT_EQ(active->at(0).open_batch, 2);
  Result<std::vector<HistoryRow>> h = store().GetHistory("roll");
  ASSERT_TRUE(h.ok());
  std::vector<std::string> task_level, opened;
  for (const HistoryRow& e : *h) {
    if (e.node_id.empty()) task_level.push_back(e.detail);
    if (e.cause == Cause::kRollout && !e.node_id.empty())
      opened.push_back(e.node_id + " " + e.detail);
  }
  EXPECT_THAT(task_level, ElementsAre("paused by alice: checking the canary's logs"));
  EXPECT_THAT(opened, ElementsAre("n2 rollout batch 2 of 3 opened: may start now",
                                  "n3 rollout batch 2 of 3 opened: may start now"));
  // Batches are never closed again, nor opened past the last.
  RolloutChange back{"roll",
                     active->at(0).version,
                     RolloutState::kRunning,
                     1,
                     "",
                     "",
                     std::nullopt,
                     0,
                     Cause::kRollout,
                     ""};
  EXPECT_EQ(store().UpdateRollout(back).code(), StatusCode::kInvalidArgument);
  back.open_batch = 4;
  EXPECT_EQ(store().UpdateRollout(back).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store()
                .UpdateRollout({"nope", 1, RolloutState::kRunning, 1, "", "", std::nullopt, 0,
                                Cause::kRollout, ""})
                .code(),
            StatusCode::kNotFound);
}

TEST_P(StoreConformanceTest, ADependencyReleaseRespectsTheBatchGate) {
  TaskSpec up = Spec("up", {"n1"});
  TaskSpec roll = WithRollout(Spec("roll", {"n1", "n2", "n3"}));
  roll.depends_on = {"up"};
  Create({up}, {"n1"});
  Create({roll}, {"n1", "n2", "n3"});
  EXPECT_THAT(Row("roll", "n2").blocked_reason, ::testing::HasSubstr("deps_pending"));
  Move("up", "n1", TaskState::kDispatched, Cause::kDispatch);
  ApplyOk({Ev("up", "n1", EventType::kAccepted)});
  ApplyOk({Ev("up", "n1", EventType::kSucceeded)});
  // Only the canary's row became due; the others say what they wait for.
  EXPECT_THAT(DueNodes(store(), clock_.Now(), "roll"), ElementsAre("n1"));
  EXPECT_EQ(Row("roll", "n2").blocked_reason, "rollout_waiting batch 2");
  EXPECT_EQ(Row("roll", "n2").due_kind, DueKind::kNone);
}

}  // namespace
}  // namespace apollo::store::testing

namespace apollo::store::testing {
namespace {

std::string Reason(StateStore& s, const std::string& task, const std::string& node) {
  Result<TaskRow> t = s.GetTask(task);
  if (!t.ok()) return "?";
  for (const NodeRow& r : t->nodes) {
    if (r.node_id == node) return r.blocked_reason;
  }
  return "?";
}

TEST_P(StoreConformanceTest, DependenciesChangeBeforeATaskStartsAndCyclesAreNamed) {
  Create({Spec("a", {"n1"}), Spec("b", {"n1"}), Spec("x", {"n1"})}, {"n1"});
  TaskSpec c = Spec("c", {"n1"});
  c.depends_on = {"b"};
  Create({c}, {"n1"});
  // x waits for a once a is added; its row is no longer due.
  ASSERT_TRUE(store().ChangeDependencies({"x", {"a"}, {}, "alice", "a first"}).ok());
  EXPECT_EQ(Reason(store(), "x", "n1"), "deps_pending [a]");
  EXPECT_EQ(store().GetTask("x")->spec.depends_on, std::vector<std::string>{"a"});
  // a -> c -> b: adding b -> a closes b -> a -> ... no; c depends on b, so
  // b depending on c is the cycle b -> c -> b.
  Status cycle = store().ChangeDependencies({"b", {"c"}, {}, "alice", ""});
  EXPECT_EQ(cycle.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(cycle.message(), "adding c to the dependencies of b would make a cycle: b -> c -> b");
  EXPECT_EQ(store().ChangeDependencies({"x", {"x"}, {}, "alice", ""}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store().ChangeDependencies({"x", {"nope"}, {}, "alice", ""}).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store().ChangeDependencies({"x", {}, {"b"}, "alice", ""}).code(),
            StatusCode::kNotFound);
  // Removing it releases the row; the history says who, on the task and the row.
  ASSERT_TRUE(store().ChangeDependencies({"x", {}, {"a"}, "bob", "not needed"}).ok());
  EXPECT_EQ(Reason(store(), "x", "n1"), "");
  EXPECT_EQ(Row("x", "n1").due_kind, DueKind::kDispatch);
  Result<std::vector<HistoryRow>> h = store().GetHistory("x");
  ASSERT_TRUE(h.ok());
  std::vector<std::string> lines;
  for (const HistoryRow& e : *h) {
    if (e.cause == Cause::kDagChange)
      lines.push_back((e.node_id.empty() ? "task" : e.node_id) + " " + e.detail);
  }
  EXPECT_THAT(lines,
              ElementsAre("task dependency on a added by alice: a first",
                          "n1 dependency on a added by alice: a first: waits, deps_pending [a]",
                          "task dependency on a removed by bob: not needed",
                          "n1 dependency on a removed by bob: not needed: may start now"));
  // A started task's dependencies are fixed.
  Move("x", "n1", TaskState::kDispatched, Cause::kDispatch);
  EXPECT_EQ(store().ChangeDependencies({"x", {"a"}, {}, "alice", ""}).code(),
            StatusCode::kFailedPrecondition);
}

TEST_P(StoreConformanceTest, AHoldKeepsRowsFromStartingUntilReleased) {
  Create({Spec("h", {"n1", "n2"})}, {"n1", "n2"});
  ASSERT_TRUE(store().HoldTask({"h", true, "alice", "change freeze"}).ok());
  EXPECT_EQ(Reason(store(), "h", "n1"), "held_by alice");
  EXPECT_EQ(store().GetTask("h")->held_by, "alice");
  EXPECT_TRUE(store().DueWork(clock_.Now(), 10)->empty());
  EXPECT_EQ(store().HoldTask({"h", true, "bob", ""}).code(), StatusCode::kFailedPrecondition);
  Reopen();
  EXPECT_EQ(Reason(store(), "h", "n2"), "held_by alice");
  ASSERT_TRUE(store().HoldTask({"h", false, "bob", "freeze over"}).ok());
  EXPECT_EQ(store().GetTask("h")->held_by, "");
  EXPECT_EQ(store().DueWork(clock_.Now(), 10)->size(), 2u);
  EXPECT_EQ(store().HoldTask({"h", false, "bob", ""}).code(), StatusCode::kFailedPrecondition);
}

TEST_P(StoreConformanceTest, AFollowingTaskGetsANewNodeOnce) {
  TaskSpec f = Spec("f", {"n1"});
  f.target_selector = TargetSelector{SelectorType::kLabel, "role", "web", "", {}, false, true};
  Create({f}, {"n1"});
  Result<std::vector<FollowingTask>> following = store().ListFollowing();
  ASSERT_TRUE(following.ok());
  ASSERT_EQ(following->size(), 1u);
  EXPECT_EQ(following->at(0).task_id, "f");
  EXPECT_EQ(following->at(0).selector.key, "role");
  Result<bool> added = store().AddFollowRow("f", "n9", "n9 registered with role=web");
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_TRUE(*added);
  EXPECT_FALSE(*store().AddFollowRow("f", "n9", "again"));
  Result<TaskRow> t = store().GetTask("f");
  ASSERT_EQ(t->nodes.size(), 2u);
  EXPECT_EQ(Row("f", "n9").due_kind, DueKind::kDispatch);
  // Not a following task: refused; stopped: no longer listed.
  EXPECT_EQ(store().AddFollowRow("missing", "n9", "").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store().StopFollowing("f").ok());
  EXPECT_TRUE(store().ListFollowing()->empty());
  EXPECT_EQ(store().AddFollowRow("f", "n8", "").status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace apollo::store::testing

namespace apollo::store::testing {
namespace {

TEST_P(StoreConformanceTest, AnAbortStopsEveryRowFromStartingInItsOwnCommit) {
  TaskSpec s = Spec("ab", {"n1", "n2", "n3"});
  RolloutSpec r;
  r.batch_size = 2;
  s.rollout = r;
  Create({s}, {"n1", "n2", "n3"});
  EXPECT_EQ(store().DueWork(clock_.Now(), 10)->size(), 2u);  // batch 1: n1, n2
  const int64_t before = Row("ab", "n1").version;
  RolloutRow ro = *store().GetTask("ab")->rollout;
  ASSERT_TRUE(store()
                  .UpdateRollout({"ab", ro.version, RolloutState::kAborting, 1, "bob", "bad build",
                                  std::nullopt, 0, Cause::kOperator, "rollout aborted by bob"})
                  .ok());
  // Nothing is due any more, and a dispatch that read n1 before loses its CAS.
  EXPECT_TRUE(store().DueWork(clock_.Now(), 10)->empty());
  EXPECT_EQ(Row("ab", "n1").blocked_reason, "held_by rollout_aborted");
  EXPECT_EQ(Move("ab", "n1", TaskState::kDispatched, Cause::kDispatch, before).outcome,
            Outcome::kVersionConflict);
  // An operator's release does not undo an abort.
  EXPECT_EQ(store().HoldTask({"ab", false, "carol", ""}).code(), StatusCode::kFailedPrecondition);
  // Once every row ended (cancelled), aborted lifts the hold.
  for (const char* n : {"n1", "n2", "n3"}) Move("ab", n, TaskState::kCancelled, Cause::kRolloutAborted);
  ro = *store().GetTask("ab")->rollout;
  ASSERT_TRUE(store()
                  .UpdateRollout({"ab", ro.version, RolloutState::kAborted, 1, "bob", "bad build",
                                  std::nullopt, 0, Cause::kRollout, ""})
                  .ok());
  EXPECT_EQ(store().GetTask("ab")->held_by, "");
}

}  // namespace
}  // namespace apollo::store::testing
