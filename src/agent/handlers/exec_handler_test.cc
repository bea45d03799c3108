#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
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

HandlerResult Exec(TestRun& run, ProcessOptions options = {}, ExecPolicy policy = {}) {
  auto handler = NewExecHandler(options, std::move(policy));
  return RunHandler(*handler, run.ctx);
}

HandlerResult ExecAllowing(TestRun& run, std::vector<std::string> allowed) {
  ExecPolicy policy;
  policy.allowed_commands = std::move(allowed);
  return Exec(run, {}, std::move(policy));
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

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
  EXPECT_FALSE(r.permanent) << "a command failing may succeed on a retry";
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
      {{{"argv", {"true"}}, {"env", {{"A=B", "x"}}}},
       "exec: params.env name 'A=B' is not a valid variable name"},
      {{{"argv", {"true"}}, {"env", {{"", "x"}}}},
       "exec: params.env name '' is not a valid variable name"},
      {{{"argv", {"true"}}, {"env", {{"A", std::string("x\0y", 3)}}}},
       "exec: params.env.A contains a NUL character"},
  };
  for (const auto& [params, message] : cases) {
    TestRun run("exec", params);
    HandlerResult r = Exec(run);
    EXPECT_EQ(r.outcome, Outcome::kFailed) << params.dump();
    EXPECT_TRUE(r.permanent) << params.dump();
    EXPECT_EQ(r.error, message) << params.dump();
  }
}

TEST(ExecHandlerTest, UnknownCommandIsFailed) {
  TestRun run("exec", {{"argv", {"apollo-no-such-command-xyz"}}});
  HandlerResult r = Exec(run);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_FALSE(r.permanent) << "it may be installed before a retry";
  EXPECT_NE(r.error.find("command not found"), std::string::npos) << r.error;
}

// The agent's own environment (tokens, proxies, whatever its unit file
// set) never reaches the child: only PATH, HOME, LANG, APOLLO_* and
// params.env.
TEST(ExecHandlerTest, ChildGetsAMinimalEnvironmentNotTheAgents) {
  ASSERT_EQ(setenv("APOLLO_TEST_AGENT_SECRET", "s3cret", 1), 0);
  TestRun run("exec", {{"argv", {"env"}}, {"env", {{"FOO", "bar"}}}});
  HandlerResult r = Exec(run);
  unsetenv("APOLLO_TEST_AGENT_SECRET");
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  std::istringstream lines(r.result["stdout_tail"].get<std::string>());
  std::map<std::string, std::string> env;
  for (std::string line; std::getline(lines, line);) {
    env[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
  }
  std::set<std::string> names;
  for (const auto& [k, v] : env) names.insert(k);
  EXPECT_EQ(names, (std::set<std::string>{"APOLLO_ATTEMPT", "APOLLO_INTENT", "APOLLO_NODE_ID",
                                          "APOLLO_TASK_ID", "FOO", "HOME", "LANG", "PATH"}));
  EXPECT_EQ(env["PATH"], "/usr/bin:/bin");
  EXPECT_EQ(env["LANG"], "C.UTF-8");
  EXPECT_EQ(env["HOME"].substr(0, 1), "/");
  EXPECT_EQ(env["FOO"], "bar");
  EXPECT_EQ(env["APOLLO_TASK_ID"], "task-42");
}

TEST(ExecHandlerTest, ParamsEnvMayReplaceTheBaseVariables) {
  TestRun run("exec", {{"argv", {"/bin/sh", "-c", "echo $PATH $HOME"}},
                       {"env", {{"PATH", "/bin"}, {"HOME", "/srv"}}}});
  HandlerResult r = Exec(run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["stdout_tail"], "/bin /srv\n");
}

TEST(ExecHandlerTest, AllowedCommandsLetOnlyMatchingProgramsRun) {
  for (const json& argv : {json{"true"}, json{"/usr/bin/true"}}) {
    TestRun run("exec", {{"argv", argv}});
    HandlerResult r = ExecAllowing(run, {"/usr/bin/true", "/opt/apollo/bin/*"});
    EXPECT_EQ(r.outcome, Outcome::kSucceeded) << argv.dump() << ": " << r.error;
  }
  TestRun glob("exec", {{"argv", {"true"}}});
  EXPECT_EQ(ExecAllowing(glob, {"/usr/bin/tr*"}).outcome, Outcome::kSucceeded);
}

TEST(ExecHandlerTest, CommandsNotAllowedAreRefusedAndNothingRuns) {
  TempDir dir;
  const std::string marker = dir.File("ran");
  // An impostor named like an allowed command, found through params.env.PATH.
  testing::WriteExecutable(dir.File("true"), "#!/bin/sh\ntouch " + marker + "\n");
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"argv", {"touch", marker}}}, "exec: /usr/bin/touch is not allowed on this node"},
      {{{"argv", {"/bin/sh", "-c", "touch " + marker}}}, "exec: /bin/sh is not allowed"},
      {{{"argv", {"/usr/bin/../bin/touch", marker}}}, "'.' or '..' components"},
      {{{"argv", {"./true"}}, {"cwd", dir.path()}}, "must be a command name or an absolute path"},
      {{{"argv", {"true"}}, {"env", {{"PATH", dir.path()}}}},
       "exec: " + dir.File("true") + " is not allowed"},
      {{{"argv", {"true"}}, {"env", {{"LD_PRELOAD", dir.File("x.so")}}}},
       "params.env may not set LD_PRELOAD"},
      {{{"argv", {"true"}}, {"env", {{"BASH_ENV", marker}}}}, "params.env may not set BASH_ENV"},
      // '*' does not cross '/', so /usr/* is not /usr/bin/true.
      {{{"argv", {"true"}}}, "exec: /usr/bin/true is not allowed"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [params, reason] = cases[i];
    TestRun run("exec", params);
    HandlerResult r = ExecAllowing(run, i + 1 == cases.size()
                                            ? std::vector<std::string>{"/usr/*"}
                                            : std::vector<std::string>{"/usr/bin/true"});
    EXPECT_EQ(r.outcome, Outcome::kFailed) << params.dump();
    EXPECT_TRUE(r.permanent) << params.dump();
    EXPECT_NE(r.error.find(reason), std::string::npos) << params.dump() << ": " << r.error;
  }
  EXPECT_FALSE(Exists(marker)) << "a refused command ran";
}

TEST(ExecHandlerTest, ProgressLinesReportProgressAndStayOutOfTheTail) {
  TestRun run("exec", Sh("echo '::progress:: 0.5 half way'; echo out; "
                         "echo '::progress:: 100%'; echo '::progress:: lots'; echo end"));
  HandlerResult r = Exec(run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  std::vector<Progress> reports = run.Reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_DOUBLE_EQ(reports[0].fraction, 0.5);
  EXPECT_EQ(reports[0].message, "half way");
  EXPECT_DOUBLE_EQ(reports[1].fraction, 1.0);
  EXPECT_EQ(reports[1].message, "");
  // A malformed progress line is ordinary output.
  EXPECT_EQ(r.result["stdout_tail"], "out\n::progress:: lots\nend\n");
}

TEST(ExecHandlerTest, ProgressCanBeQueriedWhileTheCommandRuns) {
  TempDir dir;
  const std::string go = dir.File("go");
  TestRun run("exec", Sh("echo '::progress:: 30% step 1'; while [ ! -e " + go +
                         " ]; do sleep 0.05; done"));
  run.SetTimeout(30s);
  bool seen = false;
  std::thread watcher([&] {
    seen = WaitUntil([&] { return run.progress.Latest().message == "step 1"; }, 10s);
    std::ofstream(go) << "";
  });
  HandlerResult r = Exec(run);
  watcher.join();
  EXPECT_TRUE(seen);
  EXPECT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_DOUBLE_EQ(run.progress.Latest().fraction, 0.3);
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
