#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/test_util.h"

namespace apollo::agent {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::GroupGone;
using testing::ProcessDead;
using testing::ProcessGone;
using testing::TempDir;
using testing::TestRun;
using testing::WaitUntil;

HandlerResult Exec(TestRun& run, ProcessOptions options = {}) {
  auto handler = NewExecHandler(options);
  return RunHandler(*handler, run.ctx);
}

json Sh(const std::string& script) { return {{"argv", {"/bin/sh", "-c", script}}}; }

TEST(ExecHandlerTest, SucceedsWithExitCodeAndTails) {
  TestRun run("exec", Sh("echo out; echo err >&2"));
  HandlerResult r = Exec(run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["exit_code"], 0);
  EXPECT_EQ(r.result["stdout_tail"], "out\n");
  EXPECT_EQ(r.result["stderr_tail"], "err\n");
}

TEST(ExecHandlerTest, NonZeroExitIsFailedWithDetail) {
  TestRun run("exec", Sh("echo why >&2; exit 3"));
  HandlerResult r = Exec(run);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.error, "exec: exited with code 3");
  EXPECT_EQ(r.detail["exit_code"], 3);
  EXPECT_EQ(r.detail["stderr_tail"], "why\n");
}

TEST(ExecHandlerTest, DeathBySignalIsFailed) {
  TestRun run("exec", Sh("kill -KILL $$"));
  HandlerResult r = Exec(run);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.detail["signal"], SIGKILL);
  EXPECT_EQ(r.detail["exit_code"], 128 + SIGKILL);
  EXPECT_NE(r.error.find("killed by signal 9"), std::string::npos) << r.error;
}

TEST(ExecHandlerTest, BadParamsAreFailedNotThrown) {
  const std::vector<std::pair<json, std::string>> cases = {
      {json::object(), "exec: params.argv must be a non-empty list of strings"},
      {{{"argv", json::array()}}, "exec: params.argv must be a non-empty list of strings"},
      {{{"argv", {"ls", 1}}}, "exec: params.argv must be a non-empty list of strings"},
      {{{"argv", "ls -l"}}, "exec: params.argv must be a non-empty list of strings"},
      {{{"argv", {"true"}}, {"env", {"A", "B"}}}, "exec: params.env must be an object of strings"},
      {{{"argv", {"true"}}, {"env", {{"A", 1}}}}, "exec: params.env must be an object of strings (A)"},
      {{{"argv", {"true"}}, {"cwd", 5}}, "exec: params.cwd must be a string"},
      {json::array({"true"}), "exec: params must be an object"},
  };
  for (const auto& [params, message] : cases) {
    TestRun run("exec", params);
    HandlerResult r = Exec(run);
    EXPECT_EQ(r.outcome, Outcome::kFailed) << params.dump();
    EXPECT_EQ(r.error, message) << params.dump();
  }
}

TEST(ExecHandlerTest, UnknownCommandIsFailed) {
  TestRun run("exec", {{"argv", {"apollo-no-such-command-xyz"}}});
  HandlerResult r = Exec(run);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_NE(r.error.find("command not found"), std::string::npos) << r.error;
}

TEST(ExecHandlerTest, ChildSeesApolloEnvAndParamsEnvButCannotSpoofApolloVars) {
  TestRun run("exec", Sh("echo \"$APOLLO_TASK_ID|$APOLLO_ATTEMPT|$APOLLO_NODE_ID|"
                         "$APOLLO_INTENT|$FOO\""));
  run.ctx.params["env"] = {{"FOO", "bar"}, {"APOLLO_TASK_ID", "spoofed"}};
  HandlerResult r = Exec(run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["stdout_tail"], "task-42|3|node-7|exec|bar\n");
}

TEST(ExecHandlerTest, RunsArgvWithoutAShell) {
  TestRun run("exec", {{"argv", {"echo", "$HOME", "a;b", "*"}}});
  HandlerResult r = Exec(run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["stdout_tail"], "$HOME a;b *\n");
}

TEST(ExecHandlerTest, HonoursCwd) {
  TempDir dir;
  TestRun run("exec", {{"argv", {"pwd"}}, {"cwd", dir.path()}});
  HandlerResult r = Exec(run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["stdout_tail"], dir.path() + "\n");
}

TEST(ExecHandlerTest, TenMegabytesOfOutputKeepABoundedTail) {
  TestRun run("exec", Sh("head -c 10485760 /dev/zero | tr '\\0' z; echo; echo done"));
  run.SetTimeout(60s);
  HandlerResult r = Exec(run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  std::string tail = r.result["stdout_tail"];
  EXPECT_EQ(tail.size(), 4096u);
  EXPECT_EQ(tail.substr(tail.size() - 6), "\ndone\n");
  EXPECT_EQ(r.result["stdout_truncated"], true);
}

TEST(ExecHandlerTest, InvalidUtf8OutputStillSerialises) {
  TestRun run("exec", Sh("printf 'ok\\377\\376'"));
  HandlerResult r = Exec(run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded);
  EXPECT_NO_THROW((void)r.result.dump());
}

// The must-show: cancel of a running exec leaves no child behind.
TEST(ExecHandlerTest, CancelLeavesNoChildProcessBehind) {
  TempDir dir;
  const std::string pid_file = dir.File("grandchild.pid");
  TestRun run("exec", Sh("sleep 100 & echo $! > " + pid_file + "; sleep 100"));
  pid_t grandchild = 0;
  std::thread canceller([&] {
    WaitUntil([&] {
      std::ifstream in(pid_file);
      return static_cast<bool>(in >> grandchild) && grandchild > 0;
    }, 10s);
    run.token.Cancel();
  });
  HandlerResult r = Exec(run);
  canceller.join();
  ASSERT_GT(grandchild, 0);
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  EXPECT_TRUE(ProcessDead(grandchild)) << "grandchild " << grandchild << " still running";
  EXPECT_TRUE(WaitUntil([&] { return ProcessGone(grandchild); }, 15s));
}

TEST(ExecHandlerTest, CancelKillsTheWholeProcessGroup) {
  TempDir dir;
  const std::string pid_file = dir.File("pids");
  // The shell records its own pid (= the group id) and the grandchild's.
  TestRun run("exec", Sh("sleep 100 & echo $$ $! > " + pid_file + "; wait"));
  pid_t pgid = 0, grandchild = 0;
  std::thread canceller([&] {
    WaitUntil([&] {
      std::ifstream in(pid_file);
      return static_cast<bool>(in >> pgid >> grandchild);
    }, 10s);
    run.token.Cancel();
  });
  HandlerResult r = Exec(run);
  canceller.join();
  ASSERT_GT(pgid, 0);
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  EXPECT_TRUE(ProcessDead(grandchild));
  EXPECT_TRUE(WaitUntil([&] { return GroupGone(pgid); }, 15s)) << "group " << pgid;
  EXPECT_TRUE(WaitUntil([&] { return ProcessGone(grandchild); }, 15s));
}

TEST(ExecHandlerTest, TimeoutIsTimeout) {
  TestRun run("exec", {{"argv", {"sleep", "100"}}});
  run.SetTimeout(300ms);
  const auto start = std::chrono::steady_clock::now();
  HandlerResult r = Exec(run);
  EXPECT_EQ(r.outcome, Outcome::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(ExecHandlerTest, ChildIgnoringTermIsKilledAfterGrace) {
  TempDir dir;
  const std::string ready = dir.File("ready");
  TestRun run("exec", Sh("trap '' TERM; touch " + ready + "; sleep 100"));
  std::thread canceller([&] {
    WaitUntil([&] { return access(ready.c_str(), F_OK) == 0; }, 10s);
    run.token.Cancel();
  });
  ProcessOptions options;
  options.kill_grace = 300ms;
  const auto start = std::chrono::steady_clock::now();
  HandlerResult r = Exec(run, options);
  const auto took = std::chrono::steady_clock::now() - start;
  canceller.join();
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  EXPECT_EQ(r.detail["killed"], true);
  EXPECT_EQ(r.detail["signal"], SIGKILL);
  EXPECT_LT(took, 5s);
}

}  // namespace
}  // namespace apollo::agent
