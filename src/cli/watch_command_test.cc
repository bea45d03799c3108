// `apollo-cli task watch` end to end against the fake orchestrator.
#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/testing/cli_fixture.h"

namespace apollo::cli::test_support {
namespace {

using ::testing::HasSubstr;

TEST_F(CliCommandsTest, WatchPrintsProgressAndStopsAtFinal) {
  AddTask(MakeTask("t", "DISPATCHED", {{"n", "DISPATCHED"}}));
  {
    std::lock_guard lock(fake_.mu);
    fake_.watch_updates = {MakeTask("t", "RUNNING", {{"n", "RUNNING"}}),
                           MakeTask("t", "SUCCEEDED", {{"n", "SUCCEEDED"}}),
                           MakeTask("t", "RUNNING", {{"n", "RUNNING"}})};  // never read
  }
  CliRun r = Cli({"task", "watch", "--task-id", "t"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "2024-04-05T19:34:39.000000Z  n  DISPATCHED  attempt 1\ntask t: DISPATCHED\n"
            "2024-04-05T19:34:39.000000Z  n  RUNNING  attempt 1\ntask t: RUNNING\n"
            "2024-04-05T19:34:39.000000Z  n  SUCCEEDED  attempt 1\ntask t: SUCCEEDED\n");
}

TEST_F(CliCommandsTest, WatchCancelsAStreamTheServerKeepsOpen) {
  AddTask(MakeTask("t", "RUNNING", {{"n", "RUNNING"}}));
  {
    std::lock_guard lock(fake_.mu);
    fake_.watch_updates = {MakeTask("t", "SUCCEEDED", {{"n", "SUCCEEDED"}})};
    fake_.watch_hold_open = true;
  }
  auto start = std::chrono::steady_clock::now();
  CliRun r = Cli({"task", "watch", "--task-id", "t"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("task t: SUCCEEDED\n"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  server_->Shutdown();  // waits for the handler, so watch_cancelled is final
  std::lock_guard lock(fake_.mu);
  EXPECT_TRUE(fake_.watch_cancelled);
}

TEST_F(CliCommandsTest, WatchGivesUpAfterFor) {
  AddTask(MakeTask("t", "RUNNING", {{"n", "RUNNING"}}));
  {
    std::lock_guard lock(fake_.mu);
    fake_.watch_hold_open = true;
  }
  CliRun r = Cli({"task", "watch", "--task-id", "t", "--for", "0.2"});
  ExpectOneErrorLine(r);
  EXPECT_EQ(r.err, "apollo-cli: task t not finished after 0.2s (still RUNNING)\n");
}

TEST_F(CliCommandsTest, WatchFailedTaskExitsNonZero) {
  AddTask(MakeTask("t", "RUNNING", {{"n", "RUNNING"}}));
  {
    std::lock_guard lock(fake_.mu);
    fake_.watch_updates = {MakeTask("t", "FAILED", {{"n", "RETRYING"}}),
                           MakeTask("t", "FAILED", {{"n", "FAILED"}})};
  }
  CliRun r = Cli({"-o", "json", "task", "watch", "--task-id", "t"});
  EXPECT_EQ(r.err, "apollo-cli: task t ended FAILED\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out)["nodes"][0]["status"], "FAILED");
}

TEST_F(CliCommandsTest, WatchStreamEndingEarlyIsAnError) {
  AddTask(MakeTask("t", "RUNNING", {{"n", "RUNNING"}}));
  CliRun r = Cli({"task", "watch", "--task-id", "t"});
  ExpectOneErrorLine(r);
  EXPECT_THAT(r.err, HasSubstr("ended the watch before task t finished (last status RUNNING)"));
}

}  // namespace
}  // namespace apollo::cli::test_support
