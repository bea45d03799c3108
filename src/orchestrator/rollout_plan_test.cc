// The rules of a rollout (rollout_plan.h) on hand-made rows: batches open in
// order, waits and approvals hold them, a breach pauses or aborts, operator
// actions apply only where they make sense, and nothing stays stuck once
// every row ended.
#include "orchestrator/rollout_plan.h"

#include <gtest/gtest.h>

namespace apollo::orchestrator {
namespace {

using std::chrono::seconds;

struct Fixture {
  store::TaskRow task;
  TimePoint now = FromUnixMicros(1'700'000'000'000'000);

  // `n` nodes in batches of `size` (no canary), max_retries 0.
  Fixture(int n, int size, RolloutSpec r = {}) {
    if (r.batch_size == 0 && r.batch_percent == 0) r.batch_size = size;
    task.spec.task_id = "t";
    task.spec.retry_policy.max_retries = 0;
    task.spec.rollout = r;
    std::vector<int> plan = PlanBatches(r, static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      store::NodeRow row;
      row.task_id = "t";
      row.node_id = "n" + std::to_string(i + 1);
      row.batch = plan[static_cast<size_t>(i)];
      task.nodes.push_back(row);
    }
    store::RolloutRow ro;
    ro.task_id = "t";
    ro.batches = plan.empty() ? 0 : plan.back();
    task.rollout = ro;
  }
  void Set(int node, TaskState s) { task.nodes[static_cast<size_t>(node - 1)].state = s; }
  std::optional<RolloutStep> Step() {
    return NextRolloutStep(*task.spec.rollout, *task.rollout, TallyRollout(task), now);
  }
  // Applies a step as the store would.
  void Apply(const store::RolloutChange& c) {
    task.rollout->state = c.state;
    task.rollout->open_batch = c.open_batch;
    task.rollout->paused_by = c.paused_by;
    task.rollout->reason = c.reason;
    task.rollout->next_at = c.next_at;
    task.rollout->tolerated = c.tolerated;
    ++task.rollout->version;
  }
};

TEST(RolloutPlanTest, TheNextBatchOpensOnlyWhenTheOpenOnesEnded) {
  Fixture f(4, 2);
  EXPECT_FALSE(f.Step());  // batch 1 runs
  f.Set(1, TaskState::kSucceeded);
  EXPECT_FALSE(f.Step());  // n2 still runs
  f.Set(2, TaskState::kSucceeded);
  auto s = f.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.open_batch, 2);
  EXPECT_EQ(s->change.state, RolloutState::kRunning);
  EXPECT_EQ(s->change.expected_version, f.task.rollout->version);
  f.Apply(s->change);
  f.Set(3, TaskState::kSucceeded);
  f.Set(4, TaskState::kSucceeded);
  s = f.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.state, RolloutState::kCompleted);
}

TEST(RolloutPlanTest, PauseBetweenWaitsThenOpens) {
  RolloutSpec r;
  r.batch_size = 1;
  r.pause_between = seconds(30);
  Fixture f(2, 1, r);
  f.Set(1, TaskState::kSucceeded);
  auto s = f.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.state, RolloutState::kWaiting);
  EXPECT_EQ(s->change.next_at, f.now + seconds(30));
  f.Apply(s->change);
  f.now += seconds(29);
  EXPECT_FALSE(f.Step());
  f.now += seconds(1);
  s = f.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.open_batch, 2);
}

TEST(RolloutPlanTest, ACanaryWaitsForApprovalAndOnlyApproveMovesIt) {
  RolloutSpec r;
  r.batch_size = 2;
  r.canary = 1;
  r.canary_approve = true;
  Fixture f(3, 2, r);
  f.Set(1, TaskState::kSucceeded);
  auto s = f.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.state, RolloutState::kAwaitingApproval);
  f.Apply(s->change);
  EXPECT_FALSE(f.Step());
  auto tally = TallyRollout(f.task);
  auto resume = OperatorRolloutChange(r, *f.task.rollout, tally, RolloutAction::kResume, "al", "");
  EXPECT_EQ(resume.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(resume.status().message().find("approve it"), std::string::npos);
  auto approve =
      OperatorRolloutChange(r, *f.task.rollout, tally, RolloutAction::kApprove, "al", "ok");
  ASSERT_TRUE(approve.ok());
  EXPECT_EQ(approve->open_batch, 2);
  EXPECT_EQ(approve->detail, "canary approved by al: ok");
}

TEST(RolloutPlanTest, ABreachPausesOrAbortsAndAResumeAcceptsTheFailuresSoFar) {
  RolloutSpec r;
  r.batch_size = 2;
  r.max_failures = 1;
  Fixture f(6, 2, r);
  f.Set(1, TaskState::kFailed);
  EXPECT_FALSE(f.Step());  // 1 of 1 tolerated; n2 still runs
  f.Set(2, TaskState::kFailed);
  auto s = f.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.state, RolloutState::kPaused);
  EXPECT_EQ(s->change.paused_by, "failure budget");
  EXPECT_NE(s->alert.find("2 of 6 node(s) failed, 1 tolerated (max_failures 1)"), std::string::npos)
      << s->alert;
  f.Apply(s->change);
  EXPECT_FALSE(f.Step());  // paused stays paused
  auto resume = OperatorRolloutChange(r, *f.task.rollout, TallyRollout(f.task),
                                      RolloutAction::kResume, "al", "known flake");
  ASSERT_TRUE(resume.ok());
  EXPECT_EQ(resume->tolerated, 1);
  f.Apply(*resume);
  s = f.Step();  // batch 1 ended, within the raised tolerance: batch 2 opens
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.open_batch, 2);
  f.Apply(s->change);
  f.Set(3, TaskState::kFailed);  // one more: breached again
  s = f.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.state, RolloutState::kPaused);

  r.on_breach = BreachAction::kAbort;
  Fixture g(4, 2, r);
  g.Set(1, TaskState::kFailed);
  g.Set(2, TaskState::kTimeout);
  s = g.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.state, RolloutState::kAborting);
}

TEST(RolloutPlanTest, FailuresWithRetriesLeftDoNotCount) {
  RolloutSpec r;
  r.batch_size = 1;
  Fixture f(2, 1, r);
  f.task.spec.retry_policy.max_retries = 2;
  f.Set(1, TaskState::kFailed);  // retries 0 of 2: it will be retried
  EXPECT_FALSE(f.Step());
  EXPECT_EQ(TallyRollout(f.task).failures, 0);
  f.task.nodes[0].permanent = true;  // a permanent failure is final at once
  EXPECT_EQ(TallyRollout(f.task).failures, 1);
}

TEST(RolloutPlanTest, NothingStaysStuckOnceEveryRowEnded) {
  Fixture f(2, 1);
  f.task.rollout->state = RolloutState::kPaused;
  EXPECT_FALSE(f.Step());
  f.Set(1, TaskState::kCancelled);  // the task was cancelled
  f.Set(2, TaskState::kCancelled);
  auto s = f.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.state, RolloutState::kCompleted);
  f.task.rollout->state = RolloutState::kAborting;
  s = f.Step();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->change.state, RolloutState::kAborted);
}

TEST(RolloutPlanTest, OperatorActionsApplyOnlyWhereTheyMakeSense) {
  Fixture f(2, 1);
  const RolloutSpec& r = *f.task.spec.rollout;
  auto tally = TallyRollout(f.task);
  auto pause = OperatorRolloutChange(r, *f.task.rollout, tally, RolloutAction::kPause, "", "why");
  ASSERT_TRUE(pause.ok());
  EXPECT_EQ(pause->paused_by, "an operator");
  EXPECT_EQ(pause->detail, "rollout paused by an operator: why");
  f.Apply(*pause);
  auto again = OperatorRolloutChange(r, *f.task.rollout, tally, RolloutAction::kPause, "b", "");
  EXPECT_EQ(again.status().message(),
            "cannot pause the rollout of task t: it is paused already (by an operator)");
  auto abort = OperatorRolloutChange(r, *f.task.rollout, tally, RolloutAction::kAbort, "b", "");
  ASSERT_TRUE(abort.ok());
  EXPECT_EQ(abort->state, RolloutState::kAborting);
  f.task.rollout->state = RolloutState::kCompleted;
  EXPECT_EQ(OperatorRolloutChange(r, *f.task.rollout, tally, RolloutAction::kAbort, "b", "")
                .status()
                .message(),
            "cannot abort the rollout of task t: it is completed");
  EXPECT_EQ(ParseRolloutAction("approve"), RolloutAction::kApprove);
  EXPECT_FALSE(ParseRolloutAction("stop"));
}

}  // namespace
}  // namespace apollo::orchestrator
