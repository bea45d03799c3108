// The lifecycle fields of a task file: retry tiers and presets, the
// schedule-to-start deadline, the compensation; and that the canonical form
// of a spec without them has not changed.
#include <gmock/gmock.h>

#include "core/task_spec.h"

namespace apollo {
namespace {

using ::testing::HasSubstr;

std::string Base(std::string extra) {
  return "task_id: t1\nintent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\n"
         "timeout: 30\n" +
         extra;
}

std::string Joined(const ParsedTasks& p) {
  std::string out;
  for (const auto& d : p.errors) out += d.ToString() + "\n";
  return out;
}

std::vector<std::string> TierNames(const RetryPolicy& p) {
  std::vector<std::string> out;
  for (const RetryTier& t : p.tiers) out.push_back(t.name + "x" + std::to_string(t.max_retries));
  return out;
}

TEST(TaskSpecLifecycleTest, NoRetryPolicyEscalatesFastThenSlow) {
  ParsedTasks p = ParseTaskFile(Base(""), "t.yaml");
  ASSERT_TRUE(p.ok()) << Joined(p);
  EXPECT_EQ(TierNames(p.tasks[0].retry_policy), (std::vector<std::string>{"fastx3", "slowx5"}));
  EXPECT_EQ(p.tasks[0].retry_policy.max_retries, 8);
}

TEST(TaskSpecLifecycleTest, PresetsAndTiersComeFromTheGivenPresets) {
  RetryPresets presets = BuiltinRetryPresets();
  presets["fast"].max_retries = 2;
  presets["nightly"] = RetryPolicy{1, std::chrono::seconds(3600), std::chrono::seconds(3600),
                                   Backoff::kFixed, false, {}};
  ParsedTasks a = ParseTaskFile(Base("retry_policy: {preset: nightly}\n"), "t.yaml", {}, nullptr,
                                &presets);
  ASSERT_TRUE(a.ok()) << Joined(a);
  EXPECT_EQ(TierNames(a.tasks[0].retry_policy), (std::vector<std::string>{"nightlyx1"}));
  ParsedTasks b = ParseTaskFile(
      Base("retry_policy:\n  tiers:\n    - {preset: fast}\n    - {name: last, max_retries: 1, "
           "initial_interval: 2, max_interval: 2}\n"),
      "t.yaml", {}, nullptr, &presets);
  ASSERT_TRUE(b.ok()) << Joined(b);
  EXPECT_EQ(TierNames(b.tasks[0].retry_policy), (std::vector<std::string>{"fastx2", "lastx1"}));
  ParsedTasks d = ParseTaskFile(Base(""), "t.yaml", {}, nullptr, &presets);
  EXPECT_EQ(TierNames(d.tasks[0].retry_policy), (std::vector<std::string>{"fastx2", "slowx5"}));
}

TEST(TaskSpecLifecycleTest, RetryPolicyMistakesSayWhere) {
  EXPECT_EQ(Joined(ParseTaskFile(Base("retry_policy: {preset: fats}\n"), "t.yaml")),
            "t.yaml:5:24: unknown retry preset 'fats' (known: fast, none, slow)\n");
  EXPECT_EQ(Joined(ParseTaskFile(Base("retry_policy: {preset: fast, max_retries: 2}\n"), "t.yaml")),
            "t.yaml:5:16: 'retry_policy.preset' stands alone: it sets every field\n");
  EXPECT_EQ(Joined(ParseTaskFile(Base("retry_policy: {tiers: []}\n"), "t.yaml")),
            "t.yaml:5:23: 'retry_policy.tiers' must be a non-empty list of tiers\n");
  EXPECT_THAT(Joined(ParseTaskFile(Base("retry_policy: {tiers: [{max_retries: -1}]}\n"), "t.yaml")),
              HasSubstr("t.yaml:5:38: 'retry_policy.tiers[0].max_retries' must be between 0 and"));
}

TEST(TaskSpecLifecycleTest, StartTimeoutAndCompensation) {
  ParsedTasks p = ParseTaskFile(
      Base("start_timeout: 3\non_failure: {intent: rollback, params: {to: v1}, timeout: 20}\n"),
      "t.yaml");
  ASSERT_TRUE(p.ok()) << Joined(p);
  const TaskSpec& t = p.tasks[0];
  ASSERT_TRUE(t.start_timeout.has_value());
  EXPECT_EQ(*t.start_timeout, std::chrono::seconds(3));
  ASSERT_TRUE(t.on_failure.has_value());
  EXPECT_EQ(t.on_failure->intent, "rollback");
  EXPECT_EQ(t.on_failure->params["to"], "v1");
  EXPECT_EQ(t.on_failure->timeout, std::chrono::seconds(20));

  EXPECT_EQ(Joined(ParseTaskFile(Base("on_failure: {params: {}}\n"), "t.yaml")),
            "t.yaml:5:13: 'on_failure' needs an 'intent' (the compensation to run)\n");
  EXPECT_EQ(Joined(ParseTaskFile(Base("start_timeout: -1\n"), "t.yaml")),
            "t.yaml:5:16: 'start_timeout' must be between 0 and 2592000 seconds, got -1\n");
  EXPECT_THAT(Joined(ParseTaskFile(Base("compensates: x\n"), "t.yaml")),
              HasSubstr("unknown field 'compensates'"));
}

TEST(TaskSpecLifecycleTest, CanonicalFormRoundTripsAndOldSpecsKeepTheirs) {
  ParsedTasks p = ParseTaskFile(
      Base("start_timeout: 0\non_failure: {intent: rollback}\nretry_policy: {preset: slow}\n"),
      "t.yaml");
  ASSERT_TRUE(p.ok()) << Joined(p);
  TaskSpec spec = p.tasks[0];
  spec.compensates = "origin";
  Result<TaskSpec> back = SpecFromJson(SpecToJson(spec));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, spec);

  // A spec as written before these fields existed has the same canonical
  // form as then (stored tasks stay equal to their resubmission).
  ParsedTasks old = ParseTaskFile(
      Base("retry_policy: {max_retries: 3, initial_interval: 5, max_interval: 60}\n"), "t.yaml");
  ASSERT_TRUE(old.ok()) << Joined(old);
  EXPECT_EQ(CanonicalSpec(old.tasks[0]),
            R"({"callback_url":"","depends_on":[],"intent":"noop","metadata":{},"params":{},)"
            R"("priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,)"
            R"("jitter":false,"max_interval":60,"max_retries":3},"target_selector":{)"
            R"("allow_empty":false,"nodes":["n1"],"type":"nodes"},"task_id":"t1","timeout":30})");
}

}  // namespace
}  // namespace apollo
