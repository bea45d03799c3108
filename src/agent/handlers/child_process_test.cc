#include "agent/handlers/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "agent/handlers/test_util.h"

namespace apollo::agent {
namespace {

using namespace std::chrono_literals;
using testing::GroupGone;
using testing::ProcessDead;
using testing::ProcessGone;
using testing::WaitUntil;

class ChildProcessTest : public ::testing::Test {
 protected:
  Result<ChildOutcome> Run(ChildSpec spec, ChildCallbacks callbacks = {}) {
    return RunChild(spec, StopCondition(token_, clock_, deadline_), callbacks);
  }
  static ChildSpec Sh(const std::string& script) {
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    return spec;
  }

  RealClock clock_;
  CancelToken token_;
  std::optional<TimePoint> deadline_;
};

TEST_F(ChildProcessTest, CapturesExitCodeAndBothStreams) {
  auto r = Run(Sh("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->exited);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->stdout_tail, "out\n");
  EXPECT_EQ(r->stderr_tail, "err\n");
  EXPECT_EQ(r->stopped, StopReason::kNone);
}

TEST_F(ChildProcessTest, ReportsDeathBySignal) {
  auto r = Run(Sh("kill -KILL $$"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->exited);
  EXPECT_EQ(r->term_signal, SIGKILL);
}

TEST_F(ChildProcessTest, HugeOutputOnBothPipesKeepsBoundedTails) {
  deadline_ = clock_.Now() + Duration(60s);  // a hang fails instead of blocking
  auto r = Run(Sh("head -c 10485760 /dev/zero >&2; head -c 10485760 /dev/zero | tr '\\0' a;"
                  " printf END"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stopped, StopReason::kNone);
  EXPECT_EQ(r->exit_code, 0);
  ASSERT_EQ(r->stdout_tail.size(), kDefaultTailBytes);
  EXPECT_EQ(r->stdout_tail.substr(r->stdout_tail.size() - 4), "aEND");
  EXPECT_EQ(r->stderr_tail.size(), kDefaultTailBytes);
  EXPECT_TRUE(r->stdout_truncated);
  EXPECT_TRUE(r->stderr_truncated);
}

TEST_F(ChildProcessTest, WritesStdinWhileReadingStdout) {
  ChildSpec spec;
  spec.argv = {"cat"};
  spec.stdin_data.assign(3 << 20, 'x');
  spec.stdin_data += "tail";
  auto r = Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->stdout_tail.substr(r->stdout_tail.size() - 5), "xtail");
}

TEST_F(ChildProcessTest, ChildClosingStdinEarlyDoesNotKillUs) {
  ChildSpec spec = Sh("exec 0<&-; exit 0");
  spec.stdin_data.assign(8 << 20, 'x');
  auto r = Run(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
}

TEST_F(ChildProcessTest, DeliversStdoutLines) {
  std::vector<std::string> lines;
  ChildCallbacks cb;
  cb.on_stdout_line = [&](std::string_view l) { lines.emplace_back(l); };
  auto r = Run(Sh("printf 'a\\nbb\\r\\n\\nlast'"), cb);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "bb", "", "last"}));
}

TEST_F(ChildProcessTest, MissingProgramIsNotFound) {
  ChildSpec spec;
  spec.argv = {"/nonexistent/apollo-prog"};
  EXPECT_EQ(Run(spec).status().code(), StatusCode::kNotFound);
  spec.argv = {"apollo-no-such-command-xyz"};
  EXPECT_EQ(Run(spec).status().code(), StatusCode::kNotFound);
  spec.argv = {};
  EXPECT_EQ(Run(spec).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ChildProcessTest, BadCwdIsFailedPrecondition) {
  ChildSpec spec = Sh("true");
  spec.cwd = "/nonexistent/dir";
  EXPECT_EQ(Run(spec).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(ChildProcessTest, ChildInheritsNoStrayFds) {
  int fd = open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(fd, 3);
  auto r = Run(Sh("[ -e /proc/$$/fd/" + std::to_string(fd) + " ] && exit 1; exit 0"));
  close(fd);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0) << "fd " << fd << " leaked into the child";
}

TEST_F(ChildProcessTest, RunsInItsOwnProcessGroup) {
  auto r = Run(Sh("ps -o pgid= -p $$ | tr -d ' '; echo $$"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_tail, std::to_string(r->pid) + "\n" + std::to_string(r->pid) + "\n");
  EXPECT_NE(getpgrp(), r->pid);
}

// The brief's scenario: a shell with a background grandchild, cancelled.
TEST_F(ChildProcessTest, CancelLeavesNoProcessOfTheGroupBehind) {
  std::atomic<pid_t> grandchild{0};
  ChildCallbacks cb;
  cb.on_stdout_line = [&](std::string_view l) {
    grandchild = std::stoi(std::string(l));
    token_.Cancel();
  };
  // No timing or SIGTERM-vs-SIGKILL assertion here: on a loaded 2-core
  // machine the shell may still be between fork and exec when SIGTERM
  // lands, and the grace period then ends in SIGKILL. What must hold either
  // way is that nothing of the group survives.
  auto r = Run(Sh("sleep 100 & echo $!; sleep 100"), cb);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stopped, StopReason::kCancelled);
  ASSERT_GT(grandchild.load(), 0);
  EXPECT_FALSE(GroupHasLiveMembers(r->pid));
  EXPECT_TRUE(ProcessDead(grandchild));
  // Orphaned zombies are reaped by init on its own schedule.
  EXPECT_TRUE(WaitUntil([&] { return GroupGone(r->pid); }, 15s));
  EXPECT_TRUE(WaitUntil([&] { return ProcessGone(grandchild); }, 15s));
}

TEST_F(ChildProcessTest, TermIgnoringGroupIsKilledAfterGrace) {
  ChildCallbacks cb;
  cb.on_stdout_line = [&](std::string_view) { token_.Cancel(); };
  ChildSpec spec = Sh("trap '' TERM; sleep 100 & echo ready; sleep 100");
  spec.kill_grace = 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto r = Run(spec, cb);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stopped, StopReason::kCancelled);
  EXPECT_TRUE(r->killed);
  EXPECT_FALSE(r->exited);
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
  EXPECT_FALSE(GroupHasLiveMembers(r->pid));
  EXPECT_TRUE(WaitUntil([&] { return GroupGone(r->pid); }, 15s));
}

TEST_F(ChildProcessTest, DeadlineStopsWithTimeout) {
  deadline_ = clock_.Now() + Duration(300ms);
  auto r = Run(Sh("sleep 100"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stopped, StopReason::kTimeout);
  EXPECT_EQ(token_.reason(), StopReason::kTimeout);
}

TEST_F(ChildProcessTest, DeadlineOnAManualClock) {
  ManualClock manual;
  std::optional<TimePoint> deadline = manual.Now() + Duration(10s);
  ChildCallbacks cb;
  cb.on_stdout_line = [&](std::string_view) { manual.Advance(Duration(11s)); };
  auto r = RunChild(Sh("echo started; sleep 100"), StopCondition(token_, manual, deadline), cb);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stopped, StopReason::kTimeout);
}

TEST_F(ChildProcessTest, LeftoversOfANormalExitAreStopped) {
  std::atomic<pid_t> grandchild{0};
  ChildCallbacks cb;
  cb.on_stdout_line = [&](std::string_view l) { grandchild = std::stoi(std::string(l)); };
  auto r = Run(Sh("sleep 100 & echo $!; exit 0"), cb);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->stopped, StopReason::kNone);
  ASSERT_GT(grandchild.load(), 0);
  EXPECT_TRUE(ProcessDead(grandchild));
  EXPECT_FALSE(GroupHasLiveMembers(r->pid));
}

TEST_F(ChildProcessTest, ConcurrentRunsDoNotBlockEachOther) {
  // A pipe end leaking into a sibling would keep the short run from EOF.
  CancelToken slow_token;
  std::thread slow([&] {
    std::optional<TimePoint> deadline = clock_.Now() + Duration(10s);
    (void)RunChild(Sh("sleep 100"), StopCondition(slow_token, clock_, deadline));
  });
  std::this_thread::sleep_for(50ms);
  const auto start = std::chrono::steady_clock::now();
  auto r = Run(Sh("echo quick"));
  const auto took = std::chrono::steady_clock::now() - start;
  slow_token.Cancel();
  slow.join();
  EXPECT_LT(took, 3s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_tail, "quick\n");
}

}  // namespace
}  // namespace apollo::agent
