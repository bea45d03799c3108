// apollo-cli end to end against the fake orchestrator: the one-request
// commands, server and flag errors.
#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/testing/cli_fixture.h"

namespace apollo::cli::test_support {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST_F(CliCommandsTest, StatusTextShowsRollUpAndNodes) {
  AddTask(MakeTask("collect-1", "RUNNING", {{"node-a", "SUCCEEDED"}, {"node-b", "RUNNING"}}));
  CliRun r = Cli({"task", "status", "--task-id", "collect-1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith("task collect-1: RUNNING (intent collect_metrics, 2 nodes)\n"
                                "start_timeout: none (waits for its nodes forever)\n"
                                "NODE    STATUS     ATTEMPT  RETRIES  UPDATED"));
  EXPECT_THAT(r.out, HasSubstr("node-b  RUNNING    1        0        2024-04-05T19:34:39.000000Z"));
}

TEST_F(CliCommandsTest, StatusJsonShape) {
  v1::Task t = MakeTask("collect-1", "FAILED", {{"node-a", "FAILED"}});
  t.mutable_nodes(0)->set_last_error("exit 3");
  t.mutable_nodes(0)->set_result_json(R"({"rc":3})");
  AddTask(t);
  // -o after the subcommand, as operators type it.
  CliRun r = Cli({"task", "status", "--task-id", "collect-1", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);  // exactly one document
  EXPECT_EQ(j, nlohmann::json::parse(R"({"task_id": "collect-1", "status": "FAILED",
      "metadata": {}, "start_timeout_s": 0,
      "nodes": [{"node_id": "node-a", "status": "FAILED",
                 "updated_at": "2024-04-05T19:34:39.000000Z", "attempt": 1, "retries": 0,
                 "last_error": "exit 3", "blocked_reason": "", "result": {"rc": 3}}]})"));
}

TEST_F(CliCommandsTest, UnknownTaskIsOneLine) {
  for (const char* cmd : {"status", "cancel", "retry", "events", "watch"}) {
    CliRun r = Cli({"task", cmd, "--task-id", "nope"});
    ExpectOneErrorLine(r);
    EXPECT_EQ(r.err, "apollo-cli: no task 'nope'\n") << cmd;
    EXPECT_EQ(r.out, "") << cmd;
  }
}

TEST_F(CliCommandsTest, ServerDownFailsFastWithOneLine) {
  DeadAddress dead_port;
  const std::string& dead = dead_port.str();
  for (std::vector<std::string> args :
       {std::vector<std::string>{"task", "status", "--task-id", "x"},
        {"node", "list"},
        {"task", "watch", "--task-id", "x"},
        {"task", "list", "-o", "json"}}) {
    auto start = std::chrono::steady_clock::now();
    CliRun r = Cli(args, {}, dead);
    auto took = std::chrono::steady_clock::now() - start;
    ExpectOneErrorLine(r);
    EXPECT_THAT(r.err, StartsWith("apollo-cli: cannot reach the orchestrator at " + dead + ": "));
    EXPECT_EQ(r.out, "");
    EXPECT_LT(took, std::chrono::seconds(5)) << "must not wait for the 10 s deadline";
  }
}

TEST_F(CliCommandsTest, ServerFromEnvironmentAndFlagOverridesIt) {
  AddTask(MakeTask("t", "SUCCEEDED", {{"n", "SUCCEEDED"}}));
  CliRun from_env = Cli({"task", "status", "--task-id", "t"}, CliEnv{addr_});
  EXPECT_EQ(from_env.code, 0) << from_env.err;
  CliRun flag_wins = Cli({"task", "status", "--task-id", "t"}, CliEnv{DeadAddress().str()}, addr_);
  EXPECT_EQ(flag_wins.code, 0) << flag_wins.err;
}

// Replicas: --server a,b,c (or $APOLLO_SERVER) tries them in order while
// they cannot be reached; any other answer is final.
TEST_F(CliCommandsTest, SeveralServersAreTriedInOrderUntilOneAnswers) {
  AddTask(MakeTask("t", "SUCCEEDED", {{"n", "SUCCEEDED"}}));
  DeadAddress dead1, dead2;
  CliRun r =
      Cli({"task", "status", "--task-id", "t"}, {}, dead1.str() + "," + dead2.str() + "," + addr_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith("task t: SUCCEEDED"));
  CliRun from_env = Cli({"node", "list"}, CliEnv{dead1.str() + ", " + addr_});
  EXPECT_EQ(from_env.code, 0) << from_env.err;
  CliRun watch = Cli({"task", "watch", "--task-id", "t"}, {}, dead1.str() + "," + addr_);
  EXPECT_EQ(watch.code, 0) << watch.err;
  // The first address answers "no such task": that is the answer.
  CliRun missing = Cli({"task", "status", "--task-id", "nope"}, {}, addr_ + "," + dead1.str());
  EXPECT_EQ(missing.err, "apollo-cli: no task 'nope'\n");
}

TEST_F(CliCommandsTest, NoServerReachableNamesThemAll) {
  DeadAddress a, b;
  const std::string both = a.str() + "," + b.str();
  for (std::vector<std::string> args :
       {std::vector<std::string>{"node", "list"}, {"task", "watch", "--task-id", "x"}}) {
    CliRun r = Cli(args, {}, both);
    ExpectOneErrorLine(r);
    EXPECT_THAT(r.err, StartsWith("apollo-cli: cannot reach the orchestrator at any of " + a.str() +
                                  ", " + b.str() + ": "));
    EXPECT_EQ(r.out, "");
  }
  CliRun gap = Cli({"node", "list"}, {}, a.str() + ",," + addr_);
  EXPECT_EQ(gap.code, 2);
  EXPECT_THAT(gap.err, StartsWith("apollo-cli: --server: empty address in '"));
}

TEST_F(CliCommandsTest, ListPassesFiltersAndPrintsTable) {
  AddTask(MakeTask("a", "FAILED", {}));
  AddTask(MakeTask("b", "SUCCEEDED", {}));
  CliRun r =
      Cli({"task", "list", "--status", "failed", "--intent", "collect_metrics", "--limit", "5"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "TASK_ID  STATUS  INTENT           CREATED                      METADATA\n"
            "a        FAILED  collect_metrics  2024-04-05T19:34:38.000000Z  -\n");
  {
    std::lock_guard lock(fake_.mu);
    EXPECT_EQ(fake_.last_list.status(), "FAILED");
    EXPECT_EQ(fake_.last_list.intent(), "collect_metrics");
    EXPECT_TRUE(fake_.last_list.metadata().empty());
    EXPECT_EQ(fake_.last_list.limit(), 5);
  }
  CliRun bad = Cli({"task", "list", "--status", "sleepy"});
  ExpectOneErrorLine(bad);
  EXPECT_THAT(bad.err, HasSubstr("unknown status 'sleepy'"));
}

TEST_F(CliCommandsTest, ListMetaFiltersAreSentAndBadOnesRefused) {
  CliRun r = Cli({"task", "list", "--meta", "ticket=CHG-42", "--meta", "by=a=b"});
  EXPECT_EQ(r.code, 0) << r.err;
  {
    std::lock_guard lock(fake_.mu);
    ASSERT_EQ(fake_.last_list.metadata().size(), 2u);
    EXPECT_EQ(fake_.last_list.metadata().at("ticket"), "CHG-42");
    EXPECT_EQ(fake_.last_list.metadata().at("by"), "a=b");
  }
  CliRun bad = Cli({"task", "list", "--meta", "novalue"});
  EXPECT_NE(bad.code, 0);
  EXPECT_THAT(bad.err, HasSubstr("--meta novalue: expected key=value"));
}

TEST_F(CliCommandsTest, CancelSendsReasonAndPrintsTask) {
  AddTask(MakeTask("t", "RUNNING", {{"n", "RUNNING"}}));
  CliRun r = Cli({"task", "cancel", "--task-id", "t", "--reason", "wrong version"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("task t: CANCELLED"));
  std::lock_guard lock(fake_.mu);
  EXPECT_EQ(fake_.last_cancel.reason(), "wrong version");
}

TEST_F(CliCommandsTest, RetryRefusedByServerIsOneLine) {
  AddTask(MakeTask("t", "SUCCEEDED", {{"n", "SUCCEEDED"}}));
  {
    std::lock_guard lock(fake_.mu);
    fake_.retry_status = {grpc::StatusCode::FAILED_PRECONDITION,
                          "task t is SUCCEEDED: nothing to retry"};
  }
  CliRun r = Cli({"task", "retry", "--task-id", "t"});
  ExpectOneErrorLine(r);
  EXPECT_EQ(r.err, "apollo-cli: task t is SUCCEEDED: nothing to retry\n");
}

TEST_F(CliCommandsTest, EventsInHistoryOrder) {
  {
    std::lock_guard lock(fake_.mu);
    v1::TaskEventsResponse& h = fake_.history["t"];
    v1::HistoryEntry* e = h.add_entries();
    e->set_node_id("n");
    e->set_from_status("PENDING");
    e->set_to_status("DISPATCHED");
    e->set_attempt(1);
    e->set_cause("dispatch");
    e->set_at_us(kT0);
    e = h.add_entries();
    e->set_node_id("n");
    e->set_from_status("DISPATCHED");
    e->set_to_status("RUNNING");
    e->set_attempt(1);
    e->set_cause("event n-1");
    e->set_detail("ACCEPTED");
    e->set_at_us(kT0 + 1);
  }
  CliRun r = Cli({"task", "events", "--task-id", "t"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("PENDING -> DISPATCHED  1        dispatch   -\n"));
  EXPECT_THAT(r.out, HasSubstr("DISPATCHED -> RUNNING  1        event n-1  ACCEPTED\n"));
  EXPECT_LT(r.out.find("PENDING -> DISPATCHED"), r.out.find("DISPATCHED -> RUNNING"));
}

TEST_F(CliCommandsTest, NodeList) {
  {
    std::lock_guard lock(fake_.mu);
    v1::Node* n = fake_.nodes.add_nodes();
    n->set_node_id("edge-1");
    (*n->mutable_labels())["role"] = "worker";
    n->add_groups("rack-1");
    n->set_liveness("ALIVE");
    n->set_mode("NORMAL");
    n->set_connected(true);
    n->set_running(2);
    n->set_last_heartbeat_us(kT0);
    n->add_intents("noop");
    n->add_disabled_intents("exec");
  }
  CliRun r = Cli({"node", "list"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "NODE    LIVENESS  MODE    CONNECTED  RUNNING  LAST_HEARTBEAT               LABELS     "
            "  GROUPS  INTENTS\n"
            "edge-1  ALIVE     NORMAL  yes        2        2024-04-05T19:34:38.000000Z  "
            "role=worker  rack-1  noop,exec(off)\n");
  CliRun j = Cli({"node", "list", "--output", "json"});
  EXPECT_EQ(nlohmann::json::parse(j.out)["nodes"][0]["running"], 2);
  EXPECT_EQ(nlohmann::json::parse(j.out)["nodes"][0]["disabled_intents"][0], "exec");
}

TEST_F(CliCommandsTest, HugeTimeoutIsCappedNotOverflowed) {
  AddTask(MakeTask("t", "SUCCEEDED", {{"n", "SUCCEEDED"}}));
  for (const char* t : {"1e300", "0.5"}) {
    CliRun r = Cli({"--timeout", t, "task", "status", "--task-id", "t"});
    EXPECT_EQ(r.code, 0) << t << ": " << r.err;
  }
}

TEST_F(CliCommandsTest, BadFlagsAreOneLineWithExitCode2) {
  for (std::vector<std::string> args : {std::vector<std::string>{"task", "status"},
                                        {"task", "status", "--task-id", "x", "--bogus"},
                                        {"task", "list", "-o", "yaml"},
                                        {"--timeout", "-1", "node", "list"},
                                        {"--timeout", "nan", "node", "list"},
                                        {"--timeout", "inf", "node", "list"},
                                        {"task", "watch", "--task-id", "t", "--for", "nan"},
                                        {"task"},
                                        {}}) {
    CliRun r = Cli(args);
    ExpectOneErrorLine(r);
    EXPECT_EQ(r.code, 2);
  }
  CliRun help = Cli({"task", "status", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, HasSubstr("--task-id"));
}

TEST_F(CliCommandsTest, ValidateStillWorksOfflineWithGlobalOutput) {
  std::string file = WriteFile("v.yaml", kValidTask);
  DeadAddress dead;
  CliRun r = Cli({"task", "validate", "-o", "json", "--file", file}, {}, dead.str());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["valid"], true);
}

}  // namespace
}  // namespace apollo::cli::test_support
