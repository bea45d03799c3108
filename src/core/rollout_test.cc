// The rollout block: batches, budgets, and the block read from a file, a
// typed spec and the store's JSON alike.
#include "core/rollout.h"

#include <gtest/gtest.h>

#include "core/task_spec.h"
#include "core/task_spec_proto.h"

namespace apollo {
namespace {

TEST(RolloutTest, BatchesInNodeOrderCanaryFirst) {
  RolloutSpec r;
  r.batch_size = 2;
  EXPECT_EQ(PlanBatches(r, 5), (std::vector<int>{1, 1, 2, 2, 3}));
  EXPECT_EQ(BatchCount(r, 5), 3);
  r.canary = 1;
  EXPECT_EQ(PlanBatches(r, 5), (std::vector<int>{1, 2, 2, 3, 3}));
  EXPECT_EQ(BatchCount(r, 0), 0);
  r.canary = 9;  // more canaries than nodes: one batch
  EXPECT_EQ(PlanBatches(r, 3), (std::vector<int>{1, 1, 1}));
}

TEST(RolloutTest, PercentBatchesRoundUp) {
  RolloutSpec r;
  r.batch_percent = 25;
  EXPECT_EQ(PlanBatches(r, 10), (std::vector<int>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4}));
  EXPECT_EQ(BatchCount(r, 1), 1);
}

TEST(RolloutTest, FailureBudget) {
  RolloutSpec r;
  r.batch_size = 1;
  EXPECT_EQ(FailureBudget(r, 10), 0);
  r.max_fail_percentage = 20;
  EXPECT_EQ(FailureBudget(r, 10), 2);
  EXPECT_EQ(FailureBudget(r, 4), 0);  // 20 % of 4 nodes: not one whole node
  r.max_fail_percentage.reset();
  r.max_failures = 3;
  EXPECT_EQ(FailureBudget(r, 10), 3);
  EXPECT_EQ(DescribeBudget(r), "max_failures 3");
}

constexpr char kTask[] = R"(task_id: roll-1
intent: exec
target_selector: {type: label, key: role, value: web}
timeout: 30
on_failure: {intent: exec, params: {argv: ["true"]}}
rollout:
  batch_size: 25%
  canary: 1
  canary_wait: approve
  pause_between: 1m
  max_fail_percentage: 20
  on_breach: abort
)";

TEST(RolloutTest, ParsedFromAFileAndRoundTrips) {
  ParsedTasks p = ParseTaskFile(kTask, "t.yaml");
  ASSERT_TRUE(p.ok()) << p.errors[0].ToString();
  const TaskSpec& s = p.tasks[0];
  ASSERT_TRUE(s.rollout.has_value());
  EXPECT_EQ(s.rollout->batch_percent, 25);
  EXPECT_EQ(s.rollout->canary, 1);
  EXPECT_TRUE(s.rollout->canary_approve);
  EXPECT_EQ(s.rollout->pause_between, std::chrono::seconds(60));
  EXPECT_EQ(s.rollout->max_fail_percentage, 20);
  EXPECT_EQ(s.rollout->on_breach, BreachAction::kAbort);
  // The store's JSON and the typed spec give the same task back.
  auto back = SpecFromJson(SpecToJson(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  v1::TaskSpec pb;
  TaskSpecToProto(s, &pb);
  google::protobuf::RepeatedPtrField<v1::TaskSpec> specs;
  *specs.Add() = pb;
  ParsedTasks typed = TaskSpecsFromProto(specs, "req", {}, nullptr, nullptr);
  ASSERT_TRUE(typed.ok()) << typed.errors[0].ToString();
  EXPECT_EQ(typed.tasks[0].rollout, s.rollout);
}

TEST(RolloutTest, AFollowingSelectorRoundTrips) {
  ParsedTasks p = ParseTaskFile(
      "task_id: f\nintent: exec\ntarget_selector: {type: group, group: edge, follow: true}\n"
      "timeout: 5\n",
      "t.yaml");
  ASSERT_TRUE(p.ok()) << p.errors[0].ToString();
  EXPECT_TRUE(p.tasks[0].target_selector.follow);
  auto back = SpecFromJson(SpecToJson(p.tasks[0]));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, p.tasks[0]);
  v1::TaskSpec pb;
  TaskSpecToProto(p.tasks[0], &pb);
  google::protobuf::RepeatedPtrField<v1::TaskSpec> specs;
  *specs.Add() = pb;
  ParsedTasks typed = TaskSpecsFromProto(specs, "req", {}, nullptr, nullptr);
  ASSERT_TRUE(typed.ok());
  EXPECT_TRUE(typed.tasks[0].target_selector.follow);
}

TEST(RolloutTest, ASpecWithoutRolloutKeepsItsCanonicalForm) {
  ParsedTasks p = ParseTaskFile(
      "task_id: a\nintent: exec\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 5\n",
      "t.yaml");
  ASSERT_TRUE(p.ok());
  const std::string c = CanonicalSpec(p.tasks[0]);
  EXPECT_EQ(c.find("rollout"), std::string::npos);
  EXPECT_EQ(c.find("follow"), std::string::npos);  // specs stored before stay equal
}

std::string FirstError(std::string_view text) {
  ParsedTasks p = ParseTaskFile(text, "t.yaml");
  return p.ok() ? "" : p.errors[0].ToString();
}

TEST(RolloutTest, BadBlocksSayWhatAndWhere) {
  const std::string head =
      "task_id: a\nintent: exec\ntarget_selector: {type: label, key: r, value: w}\ntimeout: 5\n";
  EXPECT_EQ(FirstError(head + "rollout: {canary: 1}\n"),
            "t.yaml:5:10: 'rollout' needs 'batch_size' (a count of nodes, or a percentage "
            "such as 25%)");
  EXPECT_EQ(FirstError(head + "rollout: {batch_size: 0}\n"),
            "t.yaml:5:23: 'rollout.batch_size' must be between 1 and 100000, got 0");
  EXPECT_EQ(FirstError(head + "rollout: {batch_size: 150%}\n"),
            "t.yaml:5:23: 'rollout.batch_size' percentage must be 1%..100%, got 150%");
  EXPECT_EQ(
      FirstError(head + "rollout: {batch_size: 2, max_failures: 1, max_fail_percentage: 5}\n"),
      "t.yaml:5:40: 'rollout.max_failures' and 'rollout.max_fail_percentage' cannot both "
      "be given: choose one failure budget");
  EXPECT_EQ(FirstError(head + "rollout: {batch_size: 2, canary_wait: approve}\n"),
            "t.yaml:5:39: 'rollout.canary_wait' needs 'rollout.canary' (the nodes to change "
            "first)");
  EXPECT_EQ(FirstError(head + "rollout: {batch_size: 2, on_breach: stop}\n"),
            "t.yaml:5:37: 'rollout.on_breach' must be pause or abort, got 'stop'");
  EXPECT_NE(FirstError(head + "rollout: {batch_size: 2, colour: red}\n").find("t.yaml:5:26: "),
            std::string::npos);
  EXPECT_EQ(FirstError(head.substr(0, head.find("}")) + ", follow: true}\ntimeout: 5\n" +
                       "rollout: {batch_size: 2}\n"),
            "t.yaml:5:10: 'rollout' and 'target_selector.follow' cannot be combined: a node "
            "joining later would skip the batches (roll out to the nodes matched now, without "
            "follow)");
  EXPECT_EQ(FirstError("task_id: a\nintent: exec\ntarget_selector: {type: nodes, nodes: [n1], "
                       "follow: true}\ntimeout: 5\n"),
            "t.yaml:3:53: 'target_selector.follow' applies to label and group selectors (a "
            "nodes list names its nodes already)");
}

}  // namespace
}  // namespace apollo
