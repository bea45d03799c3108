#include "core/task_spec.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace apollo {
namespace {

namespace fs = std::filesystem;

// The seed's own example, unchanged.
constexpr const char* kSeedExample = R"(task_id: collect-metrics-1712345678-b7e2
intent: collect_metrics
target_selector: {type: label, key: role, value: worker}
timeout: 120
retry_policy: {max_retries: 3, initial_interval: 5, max_interval: 60, backoff: exponential}
metadata: {operator: ops-team, change_ticket: CHG-2024-001}
)";

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Joined(const ParsedTasks& p) {
  std::string out;
  for (const auto& d : p.errors) out += d.ToString() + "\n";
  return out;
}

TEST(TaskSpecTest, SeedExampleParsesUnchanged) {
  ParsedTasks p = ParseTaskFile(kSeedExample, "collect_metrics.yaml");
  ASSERT_TRUE(p.ok()) << Joined(p);
  ASSERT_EQ(p.tasks.size(), 1u);
  const TaskSpec& t = p.tasks[0];
  EXPECT_EQ(t.task_id, "collect-metrics-1712345678-b7e2");
  EXPECT_FALSE(t.task_id_generated);
  EXPECT_EQ(t.intent, "collect_metrics");
  EXPECT_EQ(t.target_selector.type, SelectorType::kLabel);
  EXPECT_EQ(t.target_selector.key, "role");
  EXPECT_EQ(t.target_selector.value, "worker");
  EXPECT_EQ(t.timeout, std::chrono::seconds(120));
  EXPECT_EQ(t.retry_policy.max_retries, 3);
  EXPECT_EQ(t.retry_policy.initial_interval, std::chrono::seconds(5));
  EXPECT_EQ(t.retry_policy.max_interval, std::chrono::seconds(60));
  EXPECT_EQ(t.retry_policy.backoff, Backoff::kExponential);
  EXPECT_EQ(t.metadata.at("operator"), "ops-team");
  EXPECT_EQ(t.metadata.at("change_ticket"), "CHG-2024-001");
  EXPECT_EQ(t.priority, Priority::kNormal);
  EXPECT_TRUE(t.params.is_object() && t.params.empty());
}

TEST(TaskSpecTest, TheExamplesFolderIsValid) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator("examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ParsedTasks p = ParseTaskFile(ReadAll(entry.path()), entry.path().string());
    EXPECT_TRUE(p.ok()) << Joined(p);
    ++files;
  }
  EXPECT_GE(files, 1);
}

TEST(TaskSpecTest, DagFileWithAllOptionalFields) {
  constexpr const char* kDag = R"(tasks:
  - task_id: write-config
    intent: ensure_file
    target_selector: {type: group, group: edge}
    timeout: 30
    retry_policy: {max_retries: 2, initial_interval: 1, max_interval: 8, backoff: fixed, jitter: true}
    params:
      path: /etc/app.conf
      content: "port = 80\n"
      mode: "0644"
      replicas: 3
      ratio: 0.25
      enabled: true
      quoted: "42"
      nothing: ~
    priority: high
  - task_id: check
    intent: exec
    target_selector: {type: nodes, nodes: [edge-1, edge-2]}
    timeout: 10
    retry_policy: {max_retries: 0, initial_interval: 0, max_interval: 0, backoff: fixed}
    depends_on: [write-config]
    callback_url: https://hooks.example.com/apollo
    params: {argv: [cat, /etc/app.conf]}
)";
  ParsedTasks p = ParseTaskFile(kDag, "dag.yaml");
  ASSERT_TRUE(p.ok()) << Joined(p);
  ASSERT_EQ(p.tasks.size(), 2u);
  const TaskSpec& a = p.tasks[0];
  EXPECT_EQ(a.target_selector.type, SelectorType::kGroup);
  EXPECT_EQ(a.target_selector.group, "edge");
  EXPECT_EQ(a.priority, Priority::kHigh);
  EXPECT_TRUE(a.retry_policy.jitter);
  EXPECT_EQ(a.params["replicas"], 3);
  EXPECT_EQ(a.params["ratio"], 0.25);
  EXPECT_EQ(a.params["enabled"], true);
  EXPECT_EQ(a.params["quoted"], "42");  // quoted scalars stay strings
  EXPECT_TRUE(a.params["nothing"].is_null());
  EXPECT_EQ(a.params["content"], "port = 80\n");
  const TaskSpec& b = p.tasks[1];
  EXPECT_EQ(b.depends_on, std::vector<std::string>{"write-config"});
  EXPECT_EQ(b.target_selector.nodes, (std::vector<std::string>{"edge-1", "edge-2"}));
  EXPECT_EQ(b.callback_url, "https://hooks.example.com/apollo");
  EXPECT_EQ(b.params["argv"][1], "/etc/app.conf");
}

TEST(TaskSpecTest, MissingTaskIdIsLeftToBeGenerated) {
  ParsedTasks p = ParseTaskFile(
      "intent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 5\n"
      "retry_policy: {max_retries: 0, initial_interval: 0, max_interval: 0, backoff: fixed}\n",
      "f.yaml");
  ASSERT_TRUE(p.ok()) << Joined(p);
  EXPECT_TRUE(p.tasks[0].task_id_generated);
  EXPECT_TRUE(p.tasks[0].task_id.empty());
}

TEST(TaskSpecTest, SecondsFieldsTakeDurationsAsConfigFilesDo) {
  ParsedTasks p = ParseTaskFile(
      "intent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 2m\n"
      "start_timeout: 1h30m\n"
      "retry_policy: {max_retries: 1, initial_interval: 5s, max_interval: 90, backoff: fixed}\n",
      "f.yaml");
  ASSERT_TRUE(p.ok()) << Joined(p);
  EXPECT_EQ(p.tasks[0].timeout, std::chrono::seconds(120));
  EXPECT_EQ(p.tasks[0].start_timeout, std::chrono::seconds(5400));
  EXPECT_EQ(p.tasks[0].retry_policy.initial_interval, std::chrono::seconds(5));
  EXPECT_EQ(p.tasks[0].retry_policy.max_interval, std::chrono::seconds(90));
  // Fractions of a second, bad units and out-of-range durations are refused
  // where they are written.
  p = ParseTaskFile(
      "intent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 1500ms\n"
      "start_timeout: 10x\n",
      "f.yaml");
  EXPECT_EQ(Joined(p),
            "f.yaml:3:10: 'timeout' must be whole seconds, got '1500ms'\n"
            "f.yaml:4:16: 'start_timeout' must be seconds or a duration (30, 30s, 5m, 1h), got "
            "'10x'\n");
  p = ParseTaskFile("intent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 31d\n",
                    "f.yaml");
  EXPECT_EQ(Joined(p),
            "f.yaml:3:10: 'timeout' must be between 1 and 2592000 seconds, got 2678400\n");
}

TEST(TaskSpecTest, ExternalDependenciesResolvedByTheCaller) {
  const char* kFile =
      "task_id: b\nintent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 5\n"
      "retry_policy: {max_retries: 0, initial_interval: 0, max_interval: 0, backoff: fixed}\n"
      "depends_on: [already-submitted]\n";
  EXPECT_FALSE(ParseTaskFile(kFile, "f.yaml").ok());
  auto in_store = [](std::string_view id) { return id == "already-submitted"; };
  ParsedTasks p = ParseTaskFile(kFile, "f.yaml", {}, in_store);
  EXPECT_TRUE(p.ok()) << Joined(p);
}

TEST(TaskSpecTest, CanonicalJsonRoundTripAndEquality) {
  ParsedTasks p = ParseTaskFile(kSeedExample, "seed.yaml");
  ASSERT_TRUE(p.ok());
  const TaskSpec& t = p.tasks[0];
  auto back = SpecFromJson(SpecToJson(t));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, t);
  // The same task written differently (block style, other key order) is the
  // same canonical spec; a changed field is not.
  ParsedTasks reordered = ParseTaskFile(R"(metadata:
  change_ticket: CHG-2024-001
  operator: ops-team
retry_policy:
  backoff: exponential
  max_interval: 60
  initial_interval: 5
  max_retries: 3
timeout: 120
target_selector:
  value: worker
  key: role
  type: label
intent: collect_metrics
task_id: collect-metrics-1712345678-b7e2
)", "r.yaml");
  ASSERT_TRUE(reordered.ok()) << Joined(reordered);
  EXPECT_EQ(CanonicalSpec(reordered.tasks[0]), CanonicalSpec(t));
  TaskSpec changed = t;
  changed.timeout = std::chrono::seconds(121);
  EXPECT_NE(CanonicalSpec(changed), CanonicalSpec(t));
  EXPECT_FALSE(SpecFromJson(nlohmann::json::object()).ok());
}

TEST(TaskSpecTest, FileOverTheSizeLimitIsRefusedUnread) {
  ParseLimits limits;
  limits.max_file_bytes = 1000;
  std::string big(1001, '#');
  ParsedTasks p = ParseTaskFile(big, "big.yaml", limits);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].ToString(), "big.yaml:1:1: file is 1001 bytes; the limit is 1000");
}

TEST(TaskSpecTest, HostileBinaryInputIsADiagnosticNotACrash) {
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk.push_back(static_cast<char>((i * 7919) % 256));
  ParsedTasks p = ParseTaskFile(junk, "junk.yaml");
  EXPECT_FALSE(p.ok());
  for (const auto& d : p.errors) {
    EXPECT_GE(d.line, 1);
    EXPECT_GE(d.column, 1);
  }
}

// yaml-cpp quotes the offending character raw in its messages (here a line
// break); a diagnostic is still one printable line (found by config_fuzz).
TEST(TaskSpecTest, DiagnosticsAreOnePrintableLine) {
  const char raw[] = "li1\x02\x00\n  bus: 'C\n";
  ParsedTasks p = ParseTaskFile(std::string(raw, sizeof(raw) - 1), "x.yaml");
  ASSERT_FALSE(p.ok());
  for (const auto& d : p.errors) {
    for (char c : d.message) {
      EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << d.ToString();
    }
  }
}

// Every file in tests/data/bad/ with the exact diagnostics in its
// .expected file (one per line, in file order).
TEST(TaskSpecTest, BadFilesGiveTheExpectedDiagnostics) {
  const fs::path dir = "tests/data/bad";
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    fs::path expected_path = entry.path();
    expected_path.replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expected_path)) << expected_path << " is missing";
    std::string name = entry.path().filename().string();
    ParsedTasks p = ParseTaskFile(ReadAll(entry.path()), name);
    EXPECT_FALSE(p.ok()) << name << " parsed as valid";
    EXPECT_TRUE(p.tasks.empty()) << name;
    EXPECT_EQ(Joined(p), ReadAll(expected_path)) << "diagnostics for " << name;
    ++cases;
  }
  EXPECT_GE(cases, 30);
}

}  // namespace
}  // namespace apollo
