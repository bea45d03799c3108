// `apollo-cli task submit` end to end against the fake orchestrator.
#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/testing/cli_fixture.h"

namespace apollo::cli::test_support {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

TEST_F(CliCommandsTest, SubmitPrintsCreatedUnchangedAndWarnings) {
  {
    std::lock_guard lock(fake_.mu);
    v1::SubmittedTask* t = fake_.submit_response.add_tasks();
    t->set_task_id("collect-1");
    t->set_created(true);
    t->add_nodes("node-a");
    fake_.submit_response.add_warnings("node 'edge-9' has never registered");
  }
  std::string file = WriteFile("ok.yaml", kValidTask);
  CliRun r = Cli({"task", "submit", "--file", file});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "task collect-1: created, 1 node: node-a\n");
  EXPECT_EQ(r.err, "warning: node 'edge-9' has never registered\n");
  {
    std::lock_guard lock(fake_.mu);
    ASSERT_EQ(fake_.submits.size(), 1u);
    EXPECT_EQ(fake_.submits[0].file_name(), file);
    // Typed (issue 18): the server parses no YAML.
    EXPECT_EQ(fake_.submits[0].content(), "");
    ASSERT_EQ(fake_.submits[0].specs_size(), 1);
    EXPECT_EQ(fake_.submits[0].specs(0).task_id(), "collect-1");
    EXPECT_EQ(fake_.submits[0].specs(0).intent(), "collect_metrics");
    EXPECT_EQ(fake_.submits[0].specs(0).target_selector().key(), "role");
    EXPECT_EQ(fake_.submits[0].specs(0).retry_policy().max_retries(), 3);
    EXPECT_FALSE(fake_.submits[0].dry_run());
    fake_.submit_response.mutable_tasks(0)->set_created(false);
    fake_.submit_response.clear_warnings();
  }
  CliRun again = Cli({"task", "submit", "--file", file});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.out, "task collect-1: already submitted (unchanged), 1 node: node-a\n");
  EXPECT_EQ(again.err, "");
}

TEST_F(CliCommandsTest, SubmitDryRun) {
  {
    std::lock_guard lock(fake_.mu);
    v1::SubmittedTask* t = fake_.submit_response.add_tasks();
    t->set_task_id("collect-1");
    t->add_nodes("node-a");
    t->add_nodes("node-b");
  }
  CliRun r = Cli({"task", "submit", "--dry-run", "--file", WriteFile("dry.yaml", kValidTask)});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "task collect-1: would target 2 nodes: node-a, node-b\ndry run: nothing was stored\n");
  std::lock_guard lock(fake_.mu);
  ASSERT_EQ(fake_.submits.size(), 1u);
  EXPECT_TRUE(fake_.submits[0].dry_run());
}

TEST_F(CliCommandsTest, SubmitInvalidFileIsRefusedLocallyAndNothingSent) {
  std::string file = WriteFile("bad.yaml", "task_id: t1\nintent: [x\n");
  CliRun r = Cli({"task", "submit", "--file", file});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, MatchesRegex(".*bad\\.yaml:[0-9]+:[0-9]+: .*\n"));
  file = WriteFile("missing.yaml", "task_id: t1\ntimeout: 5\n");
  r = Cli({"task", "submit", "--file", file});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr(file + ":"));
  r = Cli({"task", "submit", "--file", "/nonexistent/x.yaml"});
  EXPECT_EQ(r.err, "apollo-cli: cannot read /nonexistent/x.yaml: No such file or directory\n");
  std::lock_guard lock(fake_.mu);
  EXPECT_TRUE(fake_.submits.empty());
}

TEST_F(CliCommandsTest, SubmitServerDiagnostics) {
  {
    std::lock_guard lock(fake_.mu);
    v1::Diagnostic* d = fake_.submit_response.add_errors();
    d->set_file("f.yaml");
    d->set_line(3);
    d->set_column(3);
    d->set_message("no node matches label role=worker");
  }
  CliRun r = Cli({"task", "submit", "--file", WriteFile("f.yaml", kValidTask)});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "f.yaml:3:3: no node matches label role=worker\n");
  r = Cli({"-o", "json", "task", "submit", "--file", WriteFile("f.yaml", kValidTask)});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out)["errors"][0]["line"], 3);
}

// The server's diagnostics about a typed task have no line: the CLI shows
// them at the task's intent, as the server does for the file's text.
TEST_F(CliCommandsTest, SubmitTypedDiagnosticsAreShownAtTheIntent) {
  {
    std::lock_guard lock(fake_.mu);
    v1::Diagnostic* d = fake_.submit_response.add_errors();
    d->set_file("f.yaml");
    d->set_message("task 'collect-1': intent 'collect_metrics' is not offered by its matched node");
    d->set_task_index(0);
    d = fake_.submit_response.add_errors();
    d->set_file("f.yaml");
    d->set_message("task 'collect-1' already exists with another spec");
  }
  CliRun r = Cli({"task", "submit", "--file", WriteFile("f.yaml", kValidTask)});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "f.yaml:2:9: task 'collect-1': intent 'collect_metrics' is not offered by its matched "
            "node\nf.yaml:1:1: task 'collect-1' already exists with another spec\n");
}

// A preset only the server knows: only the server can read the file, so its
// text goes (and the server reports at the file's line:column).
TEST_F(CliCommandsTest, SubmitWithAServerPresetSendsTheText) {
  const std::string text =
      std::string(kValidTask).substr(0, std::string(kValidTask).find("retry_policy:")) +
      "retry_policy: {preset: nightly}\n";
  CliRun r = Cli({"task", "submit", "--file", WriteFile("p.yaml", text)});
  EXPECT_EQ(r.code, 0) << r.err;
  std::lock_guard lock(fake_.mu);
  ASSERT_EQ(fake_.submits.size(), 1u);
  EXPECT_EQ(fake_.submits[0].content(), text);
  EXPECT_EQ(fake_.submits[0].specs_size(), 0);
}

}  // namespace
}  // namespace apollo::cli::test_support
