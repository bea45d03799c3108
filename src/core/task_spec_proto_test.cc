// Typed specs (issue 18): the round trip, and each rule refusing a typed
// spec with the message the same task gets in a file.
#include "core/task_spec_proto.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace apollo {
namespace {

using std::chrono::seconds;

ParsedTasks FromProto(const v1::TaskSpec& pb, const ParseLimits& limits = {},
                      const ExternalTaskLookup& external = nullptr,
                      const RetryPresets* presets = nullptr) {
  google::protobuf::RepeatedPtrField<v1::TaskSpec> specs;
  *specs.Add() = pb;
  return TaskSpecsFromProto(specs, "req", limits, external, presets);
}

std::string Joined(const std::vector<Diagnostic>& errors) {
  std::string out;
  for (const auto& d : errors) out += d.ToString() + "\n";
  return out;
}

// A task with every field set (compensates is the orchestrator's own).
TaskSpec RichSpec() {
  TaskSpec s;
  s.task_id = "rich-1";
  s.intent = "ensure_file";
  s.target_selector.type = SelectorType::kLabel;
  s.target_selector.key = "role";
  s.target_selector.value = "web";
  s.target_selector.allow_empty = true;
  s.timeout = seconds(90);
  s.retry_policy = RetryPolicy::Tiered(
      {RetryTier{"fast", 3, seconds(5), seconds(60), Backoff::kExponential, true},
       RetryTier{"", 2, seconds(30), seconds(600), Backoff::kFixed, false}});
  s.depends_on = {"up-1", "up-2"};
  s.callback_url = "https://hooks.example.com/apollo";
  s.metadata = {{"operator", "ops"}, {"ticket", "CHG-1"}};
  s.params = {{"path", "/etc/app.conf"}, {"replicas", 3}, {"nested", {{"k", {1, 2.5, nullptr}}}}};
  s.priority = Priority::kHigh;
  s.start_timeout = seconds(0);
  s.on_failure = CompensationSpec{"rollback", {{"version", 1}}, seconds(20)};
  return s;
}

TEST(TaskSpecProtoTest, RichSpecRoundTrips) {
  const TaskSpec spec = RichSpec();
  v1::TaskSpec pb;
  TaskSpecToProto(spec, &pb);
  EXPECT_EQ(pb.task_id(), "rich-1");
  EXPECT_EQ(pb.retry_policy().tiers_size(), 2);
  auto upstream = [](std::string_view id) { return id == "up-1" || id == "up-2"; };
  ParsedTasks back = FromProto(pb, {}, upstream);
  ASSERT_TRUE(back.ok()) << Joined(back.errors);
  ASSERT_EQ(back.tasks.size(), 1u);
  EXPECT_EQ(back.tasks[0], spec);
  EXPECT_EQ(CanonicalSpec(back.tasks[0]), CanonicalSpec(spec));
}

TEST(TaskSpecProtoTest, OtherShapesRoundTrip) {
  TaskSpec group;  // one-tier retry policy, group selector, defaults elsewhere
  group.task_id = "g-1";
  group.intent = "noop";
  group.target_selector.type = SelectorType::kGroup;
  group.target_selector.group = "edge";
  group.timeout = seconds(5);
  group.retry_policy = RetryPolicy{0, seconds(1), seconds(1), Backoff::kFixed, false, {}};
  TaskSpec nodes = group;  // nodes selector, generated id, low priority
  nodes.task_id.clear();
  nodes.task_id_generated = true;
  nodes.target_selector = TargetSelector{SelectorType::kNodes, "", "", "", {"n1", "n2"}, false};
  nodes.priority = Priority::kLow;
  nodes.start_timeout = seconds(30);
  nodes.on_failure = CompensationSpec{"undo", nlohmann::json::object(), seconds(0)};
  for (const TaskSpec& spec : {group, nodes}) {
    v1::TaskSpec pb;
    TaskSpecToProto(spec, &pb);
    ParsedTasks back = FromProto(pb);
    ASSERT_TRUE(back.ok()) << Joined(back.errors);
    EXPECT_EQ(back.tasks[0], spec) << CanonicalSpec(spec);
  }
}

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What a client does with a file: parse, send typed; the server gets the
// file's tasks back.
TEST(TaskSpecProtoTest, ParsedFilesSurviveTheTypedForm) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator("examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ParsedTasks parsed = ParseTaskFile(ReadAll(entry.path()), "f.yaml");
    ASSERT_TRUE(parsed.ok()) << Joined(parsed.errors);
    ASSERT_EQ(parsed.retry_written.size(), parsed.tasks.size());
    google::protobuf::RepeatedPtrField<v1::TaskSpec> specs;
    for (size_t i = 0; i < parsed.tasks.size(); ++i) {
      TaskSpecToProto(parsed.tasks[i], parsed.retry_written[i], specs.Add());
    }
    ParsedTasks back = TaskSpecsFromProto(specs, "f.yaml");
    ASSERT_TRUE(back.ok()) << Joined(back.errors);
    EXPECT_EQ(back.tasks, parsed.tasks) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 2);
}

constexpr const char* kPresetFile = R"(tasks:
  - {task_id: a, intent: noop, target_selector: {type: nodes, nodes: [n1]}, timeout: 5}
  - {task_id: b, intent: noop, target_selector: {type: nodes, nodes: [n1]}, timeout: 5,
     retry_policy: {preset: slow}}
  - {task_id: c, intent: noop, target_selector: {type: nodes, nodes: [n1]}, timeout: 5,
     retry_policy: {tiers: [{preset: fast}, {max_retries: 1, initial_interval: 2, max_interval: 2}]}}
)";

// Presets and the default policy travel by name: the server's own decide.
TEST(TaskSpecProtoTest, PresetsAndTheDefaultAreTheServers) {
  ParsedTasks parsed = ParseTaskFile(kPresetFile, "p.yaml");
  ASSERT_TRUE(parsed.ok()) << Joined(parsed.errors);
  ASSERT_EQ(parsed.retry_written.size(), 3u);
  EXPECT_FALSE(parsed.retry_written[0].has_value());
  google::protobuf::RepeatedPtrField<v1::TaskSpec> specs;
  for (size_t i = 0; i < 3; ++i) {
    TaskSpecToProto(parsed.tasks[i], parsed.retry_written[i], specs.Add());
  }
  EXPECT_FALSE(specs[0].has_retry_policy());
  EXPECT_EQ(specs[1].retry_policy().preset(), "slow");
  EXPECT_EQ(specs[2].retry_policy().tiers(0).preset(), "fast");
  // A server whose presets differ from the built-in ones.
  RetryPresets server = BuiltinRetryPresets();
  server["fast"] = RetryPolicy{2, seconds(1), seconds(1), Backoff::kFixed, false, {}};
  server["slow"] = RetryPolicy{9, seconds(30), seconds(30), Backoff::kFixed, false, {}};
  ParsedTasks typed = TaskSpecsFromProto(specs, "p.yaml", {}, nullptr, &server);
  ParsedTasks yaml = ParseTaskFile(kPresetFile, "p.yaml", {}, nullptr, &server);
  ASSERT_TRUE(typed.ok()) << Joined(typed.errors);
  ASSERT_TRUE(yaml.ok()) << Joined(yaml.errors);
  EXPECT_EQ(typed.tasks, yaml.tasks);
  EXPECT_EQ(typed.tasks[1].retry_policy.max_retries, 9);
  EXPECT_EQ(typed.tasks[0].retry_policy, DefaultRetryPolicy(server));
}

// ---------------------------------------------------------------- the rules

// The valid task both forms start from.
v1::TaskSpec BaseProto() {
  v1::TaskSpec pb;
  pb.set_task_id("t1");
  pb.set_intent("noop");
  pb.mutable_target_selector()->set_type(v1::SELECTOR_TYPE_NODES);
  pb.mutable_target_selector()->add_nodes("n1");
  pb.set_timeout_s(60);
  return pb;
}

// The same task as a file, each field replaced by `with` (an empty value:
// left out).
std::string BaseYaml(const std::map<std::string, std::string>& with) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"task_id", "t1"},
      {"intent", "noop"},
      {"target_selector", "{type: nodes, nodes: [n1]}"},
      {"timeout", "60"}};
  for (const auto& [k, v] : with) {
    bool found = false;
    for (auto& f : fields) {
      if (f.first == k) f.second = v, found = true;
    }
    if (!found) fields.emplace_back(k, v);
  }
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!v.empty()) out += k + ": " + v + "\n";
  }
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

struct RuleCase {
  std::string name;
  std::map<std::string, std::string> yaml;   // the file's fields
  std::function<void(v1::TaskSpec*)> typed;  // the same, typed
};

TEST(TaskSpecProtoTest, EachRuleRefusesATypedSpecAsItRefusesTheFile) {
  ParseLimits limits;
  limits.max_payload_bytes = 100;  // small, for the payload rules
  const std::string big(120, 'x');
  const std::string long_id(130, 'a');
  const std::vector<RuleCase> cases = {
      {"missing intent", {{"intent", ""}}, [](auto* p) { p->clear_intent(); }},
      {"intent alphabet", {{"intent", "'no op!'"}}, [](auto* p) { p->set_intent("no op!"); }},
      {"missing selector", {{"target_selector", ""}}, [](auto* p) { p->clear_target_selector(); }},
      {"missing timeout", {{"timeout", ""}}, [](auto* p) { p->clear_timeout_s(); }},
      {"negative timeout", {{"timeout", "-5"}}, [](auto* p) { p->set_timeout_s(-5); }},
      {"timeout too long", {{"timeout", "9999999"}}, [](auto* p) { p->set_timeout_s(9999999); }},
      {"task_id alphabet", {{"task_id", "'bad id!'"}}, [](auto* p) { p->set_task_id("bad id!"); }},
      {"task_id length", {{"task_id", long_id}}, [&](auto* p) { p->set_task_id(long_id); }},
      {"selector type missing",
       {{"target_selector", "{nodes: [n1]}"}},
       [](auto* p) { p->mutable_target_selector()->clear_type(); }},
      {"label needs value",
       {{"target_selector", "{type: label, key: role}"}},
       [](auto* p) {
         p->mutable_target_selector()->set_type(v1::SELECTOR_TYPE_LABEL);
         p->mutable_target_selector()->clear_nodes();
         p->mutable_target_selector()->set_key("role");
       }},
      {"field of another type",
       {{"target_selector", "{type: nodes, nodes: [n1], group: g}"}},
       [](auto* p) { p->mutable_target_selector()->set_group("g"); }},
      {"group alphabet",
       {{"target_selector", "{type: group, group: 'a b'}"}},
       [](auto* p) {
         p->mutable_target_selector()->set_type(v1::SELECTOR_TYPE_GROUP);
         p->mutable_target_selector()->clear_nodes();
         p->mutable_target_selector()->set_group("a b");
       }},
      {"node twice",
       {{"target_selector", "{type: nodes, nodes: [n1, n1]}"}},
       [](auto* p) { p->mutable_target_selector()->add_nodes("n1"); }},
      {"node alphabet",
       {{"target_selector", "{type: nodes, nodes: [n1, 'n 2']}"}},
       [](auto* p) { p->mutable_target_selector()->add_nodes("n 2"); }},
      {"max_retries",
       {{"retry_policy", "{max_retries: 101}"}},
       [](auto* p) { p->mutable_retry_policy()->set_max_retries(101); }},
      {"negative interval",
       {{"retry_policy", "{initial_interval: -1}"}},
       [](auto* p) { p->mutable_retry_policy()->set_initial_interval_s(-1); }},
      {"initial above max",
       {{"retry_policy", "{initial_interval: 9, max_interval: 3}"}},
       [](auto* p) {
         p->mutable_retry_policy()->set_initial_interval_s(9);
         p->mutable_retry_policy()->set_max_interval_s(3);
       }},
      {"unknown preset",
       {{"retry_policy", "{preset: sometimes}"}},
       [](auto* p) { p->mutable_retry_policy()->set_preset("sometimes"); }},
      {"preset stands alone",
       {{"retry_policy", "{preset: fast, max_retries: 1}"}},
       [](auto* p) {
         p->mutable_retry_policy()->set_preset("fast");
         p->mutable_retry_policy()->set_max_retries(1);
       }},
      {"tier preset stands alone",
       {{"retry_policy", "{tiers: [{preset: fast, max_retries: 1}]}"}},
       [](auto* p) {
         v1::RetryTier* t = p->mutable_retry_policy()->add_tiers();
         t->set_preset("fast");
         t->set_max_retries(1);
       }},
      {"unknown tier preset",
       {{"retry_policy", "{tiers: [{max_retries: 1}, {preset: nope}]}"}},
       [](auto* p) {
         p->mutable_retry_policy()->add_tiers()->set_max_retries(1);
         p->mutable_retry_policy()->add_tiers()->set_preset("nope");
       }},
      {"tier name alphabet",
       {{"retry_policy", "{tiers: [{name: 'a b', max_retries: 1}]}"}},
       [](auto* p) {
         v1::RetryTier* t = p->mutable_retry_policy()->add_tiers();
         t->set_name("a b");
         t->set_max_retries(1);
       }},
      {"tier interval",
       {{"retry_policy", "{tiers: [{max_interval: 100000}]}"}},
       [](auto* p) { p->mutable_retry_policy()->add_tiers()->set_max_interval_s(100000); }},
      {"depends_on entry", {{"depends_on", "['x y']"}}, [](auto* p) { p->add_depends_on("x y"); }},
      {"depends_on twice",
       {{"depends_on", "[up, up]"}},
       [](auto* p) {
         p->add_depends_on("up");
         p->add_depends_on("up");
       }},
      {"unknown dependency",
       {{"depends_on", "[elsewhere]"}},
       [](auto* p) { p->add_depends_on("elsewhere"); }},
      {"self dependency", {{"depends_on", "[t1]"}}, [](auto* p) { p->add_depends_on("t1"); }},
      {"callback_url",
       {{"callback_url", "ftp://x"}},
       [](auto* p) { p->set_callback_url("ftp://x"); }},
      {"metadata size",
       {{"metadata", "{blob: " + big + "}"}},
       [&](auto* p) { (*p->mutable_metadata())["blob"] = big; }},
      {"params size",
       {{"params", "{blob: " + big + "}"}},
       [&](auto* p) { p->set_params_json(R"({"blob":")" + big + R"("})"); }},
      {"params not a mapping",
       {{"params", "[1, 2]"}},
       [](auto* p) { p->set_params_json("[1,2]"); }},
      {"start_timeout", {{"start_timeout", "-1"}}, [](auto* p) { p->set_start_timeout_s(-1); }},
      {"on_failure intent",
       {{"on_failure", "{timeout: 5}"}},
       [](auto* p) { p->mutable_on_failure()->set_timeout_s(5); }},
      {"on_failure timeout",
       {{"on_failure", "{intent: undo, timeout: -3}"}},
       [](auto* p) {
         p->mutable_on_failure()->set_intent("undo");
         p->mutable_on_failure()->set_timeout_s(-3);
       }},
      {"on_failure params",
       {{"on_failure", "{intent: undo, params: {blob: " + big + "}}"}},
       [&](auto* p) {
         p->mutable_on_failure()->set_intent("undo");
         p->mutable_on_failure()->set_params_json(R"({"blob":")" + big + R"("})");
       }},
  };
  for (const RuleCase& c : cases) {
    ParsedTasks file = ParseTaskFile(BaseYaml(c.yaml), "f.yaml", limits);
    ASSERT_FALSE(file.ok()) << c.name << ": the file is valid";
    std::vector<std::string> want;
    for (const auto& d : file.errors) want.push_back(d.message);
    v1::TaskSpec pb = BaseProto();
    c.typed(&pb);
    ParsedTasks typed = FromProto(pb, limits);
    EXPECT_TRUE(typed.tasks.empty()) << c.name;
    std::vector<std::string> got;
    for (const auto& d : typed.errors) {
      EXPECT_EQ(d.file, "req") << c.name;
      EXPECT_EQ(d.line, 0) << c.name;
      EXPECT_EQ(d.column, 0) << c.name;
      EXPECT_EQ(d.task_index, 0) << c.name;
      const std::string prefix = "task 1 (id " + pb.task_id() + "): ";
      if (pb.task_id().size() > 100 || pb.task_id().find(' ') != std::string::npos) {
        got.push_back(d.message.substr(d.message.find("): ") + 3));  // a quoted bad id
      } else {
        ASSERT_TRUE(d.message.starts_with(prefix)) << c.name << ": " << d.message;
        got.push_back(d.message.substr(prefix.size()));
      }
    }
    EXPECT_EQ(Sorted(got), Sorted(want)) << c.name << "\n" << Joined(typed.errors);
  }
}

// Rules whose message names where something is, or a request rather than
// a file.
TEST(TaskSpecProtoTest, RequestWideRules) {
  google::protobuf::RepeatedPtrField<v1::TaskSpec> specs;
  *specs.Add() = BaseProto();
  *specs.Add() = BaseProto();  // the same id again
  v1::TaskSpec* c = specs.Add();
  *c = BaseProto();
  c->set_task_id("c");
  c->add_depends_on("d");
  v1::TaskSpec* d = specs.Add();
  *d = BaseProto();
  d->set_task_id("d");
  d->add_depends_on("c");
  ParsedTasks p = TaskSpecsFromProto(specs, "batch.yaml");
  ASSERT_EQ(p.errors.size(), 2u) << Joined(p.errors);
  EXPECT_EQ(p.errors[0].ToString(),
            "batch.yaml:0:0: task 2 (id t1): duplicate task_id 't1' (first defined at task 1)");
  EXPECT_EQ(p.errors[0].task_index, 1);
  EXPECT_EQ(p.errors[1].message, "task 3 (id c): dependency cycle: c -> d -> c");
  EXPECT_TRUE(p.tasks.empty());

  ParseLimits limits;
  limits.max_tasks = 3;
  p = TaskSpecsFromProto(specs, "batch.yaml", limits);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].message, "'specs' has 4 tasks; the limit is 3");
  EXPECT_EQ(p.errors[0].task_index, -1);
  limits = ParseLimits{};
  limits.max_file_bytes = 40;
  p = TaskSpecsFromProto(specs, "batch.yaml", limits);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_TRUE(p.errors[0].message.starts_with("'specs' (serialized) is ") &&
              p.errors[0].message.ends_with(" bytes; the limit is 40"))
      << p.errors[0].message;
}

TEST(TaskSpecProtoTest, TypedOnlyProblems) {
  v1::TaskSpec pb = BaseProto();
  pb.clear_task_id();
  pb.set_params_json("{not json");
  pb.set_priority(static_cast<v1::Priority>(7));
  pb.mutable_retry_policy()->set_backoff(static_cast<v1::Backoff>(9));
  pb.mutable_target_selector()->set_type(static_cast<v1::SelectorType>(8));
  ParsedTasks p = FromProto(pb);
  std::vector<std::string> got;
  for (const auto& d : p.errors) got.push_back(d.message);
  EXPECT_EQ(Sorted(got), Sorted({"task 1 (no task_id): 'params' is not valid JSON",
                                 "task 1 (no task_id): 'priority' must be high, normal or low, "
                                 "got '7'",
                                 "task 1 (no task_id): 'retry_policy.backoff' must be exponential "
                                 "or fixed, got '9'",
                                 "task 1 (no task_id): 'target_selector.type' must be label, group "
                                 "or nodes, got '8'"}))
      << Joined(p.errors);
  // Nesting is bounded before the JSON is parsed.
  pb = BaseProto();
  pb.set_params_json("{\"a\":" + std::string(40, '[') + std::string(40, ']') + "}");
  p = FromProto(pb);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].message, "task 1 (id t1): nesting deeper than 32 levels");
  // A generated id, external dependencies, and a valid typed task.
  pb = BaseProto();
  pb.clear_task_id();
  pb.add_depends_on("stored-earlier");
  p = FromProto(pb, {}, [](std::string_view id) { return id == "stored-earlier"; });
  ASSERT_TRUE(p.ok()) << Joined(p.errors);
  EXPECT_TRUE(p.tasks[0].task_id_generated);
  EXPECT_EQ(p.tasks[0].retry_policy, DefaultRetryPolicy(BuiltinRetryPresets()));
}

}  // namespace
}  // namespace apollo
