#include "core/task_state.h"

#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace apollo {
namespace {

using S = TaskState;

// The table from ARCHITECTURE.md, written out pair by pair, independently of
// the implementation's bit masks.
const std::set<std::pair<S, S>> kLegal = {
    {S::kPending, S::kDispatched},   {S::kPending, S::kCancelled},
    {S::kDispatched, S::kRunning},   {S::kDispatched, S::kCancelled},
    {S::kDispatched, S::kTimeout},   {S::kRunning, S::kSucceeded},
    {S::kRunning, S::kFailed},       {S::kRunning, S::kTimeout},
    {S::kRunning, S::kCancelled},    {S::kFailed, S::kRetrying},
    {S::kTimeout, S::kRetrying},     {S::kRetrying, S::kRunning},
    {S::kRetrying, S::kCancelled},
    // Not started within start_timeout (schedule-to-start).
    {S::kPending, S::kTimeout},      {S::kRetrying, S::kTimeout},
};

TEST(TaskStateTest, EverySixtyFourPairsMatchesTheTable) {
  int checked = 0, allowed = 0;
  for (S from : kAllTaskStates) {
    for (S to : kAllTaskStates) {
      TransitionCheck c = CheckTransition(from, to);
      bool expect = kLegal.count({from, to}) > 0;
      EXPECT_EQ(c.allowed, expect) << TaskStateName(from) << " -> " << TaskStateName(to);
      if (c.allowed) {
        EXPECT_TRUE(c.reason.empty());
        ++allowed;
      } else {
        EXPECT_FALSE(c.reason.empty()) << TaskStateName(from) << " -> " << TaskStateName(to);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 64);
  EXPECT_EQ(allowed, 15);
}

TEST(TaskStateTest, RefusalsSayWhy) {
  EXPECT_EQ(CheckTransition(S::kSucceeded, S::kRunning).reason, "SUCCEEDED is final");
  EXPECT_EQ(CheckTransition(S::kCancelled, S::kPending).reason, "CANCELLED is final");
  EXPECT_EQ(CheckTransition(S::kFailed, S::kSucceeded).reason, "FAILED may only go to RETRYING");
  EXPECT_EQ(CheckTransition(S::kRunning, S::kRunning).reason, "already RUNNING");
  EXPECT_FALSE(CheckTransition(static_cast<S>(42), S::kRunning).allowed);
}

TEST(TaskStateTest, FinalStates) {
  for (S s : kAllTaskStates) {
    bool final_state = s == S::kSucceeded || s == S::kCancelled;
    EXPECT_EQ(IsFinal(s), final_state) << TaskStateName(s);
    // A final state has no way out at all.
    if (final_state) {
      for (S to : kAllTaskStates) EXPECT_FALSE(IsTransitionAllowed(s, to));
    }
  }
  EXPECT_TRUE(IsFinalUnlessRetried(S::kFailed));
  EXPECT_TRUE(IsFinalUnlessRetried(S::kTimeout));
  EXPECT_FALSE(IsFinalUnlessRetried(S::kRunning));
  EXPECT_TRUE(IsSettled(S::kFailed, true));
  EXPECT_FALSE(IsSettled(S::kFailed, false));
  EXPECT_TRUE(IsSettled(S::kSucceeded, false));
}

TEST(TaskStateTest, NamesRoundTrip) {
  for (S s : kAllTaskStates) EXPECT_EQ(ParseTaskState(TaskStateName(s)), s);
  EXPECT_EQ(ParseTaskState("running"), std::nullopt);
  EXPECT_EQ(ParseTaskState(""), std::nullopt);
}

struct RollUpCase {
  std::vector<S> nodes;
  S expected;
};

TEST(TaskStateTest, RollUp) {
  const std::vector<RollUpCase> cases = {
      {{}, S::kPending},
      {{S::kPending, S::kPending}, S::kPending},
      {{S::kPending, S::kSucceeded}, S::kDispatched},
      {{S::kDispatched, S::kSucceeded}, S::kDispatched},
      {{S::kRunning, S::kFailed, S::kPending}, S::kRunning},
      {{S::kRetrying, S::kSucceeded}, S::kRetrying},
      {{S::kSucceeded, S::kSucceeded}, S::kSucceeded},
      {{S::kSucceeded, S::kFailed}, S::kFailed},
      {{S::kSucceeded, S::kTimeout}, S::kTimeout},
      {{S::kTimeout, S::kFailed}, S::kFailed},
      {{S::kCancelled, S::kCancelled}, S::kCancelled},
      {{S::kSucceeded, S::kCancelled}, S::kCancelled},
      {{S::kCancelled, S::kFailed}, S::kFailed},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(RollUp(c.nodes), c.expected) << "case with " << c.nodes.size() << " nodes";
  }
}

TEST(TaskStateTest, AgentReportPathWalksThroughRunningOnlyForAFinishedRunNotAcked) {
  using S = TaskState;
  auto path = [](S from, S to) {
    ReportPath p = AgentReportPath(from, to);
    return std::vector<S>(p.view().begin(), p.view().end());
  };
  // The agent ran it but its ACCEPTED never reached the store.
  EXPECT_EQ(path(S::kDispatched, S::kSucceeded), (std::vector<S>{S::kRunning, S::kSucceeded}));
  EXPECT_EQ(path(S::kDispatched, S::kFailed), (std::vector<S>{S::kRunning, S::kFailed}));
  EXPECT_EQ(path(S::kRetrying, S::kSucceeded), (std::vector<S>{S::kRunning, S::kSucceeded}));
    EXPECT_EQ(path(S::kRetrying, S::kFailed), (std::vector<S>{S::kRunning, S::kFailed}));
  // An agent's TIMEOUT: its run started (RETRYING -> TIMEOUT directly is
  // the center's "not started", never an agent's report).
  EXPECT_EQ(path(S::kRetrying, S::kTimeout), (std::vector<S>{S::kRunning, S::kTimeout}));
  EXPECT_TRUE(path(S::kPending, S::kTimeout).empty());
  EXPECT_TRUE(AgentReportPath(S::kDispatched, S::kSucceeded).implied_running());
  // Legal transitions take one step.
  EXPECT_EQ(path(S::kRunning, S::kSucceeded), (std::vector<S>{S::kSucceeded}));
  EXPECT_EQ(path(S::kDispatched, S::kRunning), (std::vector<S>{S::kRunning}));
  EXPECT_EQ(path(S::kDispatched, S::kTimeout), (std::vector<S>{S::kTimeout}));
  EXPECT_EQ(path(S::kDispatched, S::kCancelled), (std::vector<S>{S::kCancelled}));
  EXPECT_FALSE(AgentReportPath(S::kRunning, S::kFailed).implied_running());
  // Everything else stays refused: nothing un-finishes, nothing skips PENDING.
  for (S to : kAllTaskStates) {
    EXPECT_TRUE(path(S::kSucceeded, to).empty()) << TaskStateName(to);
    EXPECT_TRUE(path(S::kCancelled, to).empty()) << TaskStateName(to);
  }
  EXPECT_TRUE(path(S::kPending, S::kSucceeded).empty());
  EXPECT_TRUE(path(S::kPending, S::kRunning).empty());
  EXPECT_TRUE(path(S::kFailed, S::kSucceeded).empty());
  EXPECT_TRUE(path(S::kTimeout, S::kSucceeded).empty());
  EXPECT_TRUE(path(S::kDispatched, S::kRetrying).empty());
  // Every path is made of legal steps only.
  for (S from : kAllTaskStates) {
    for (S to : kAllTaskStates) {
      S at = from;
      const ReportPath p = AgentReportPath(from, to);
      for (S step : p.view()) {
        EXPECT_TRUE(IsTransitionAllowed(at, step))
            << TaskStateName(from) << " -> " << TaskStateName(to);
        at = step;
      }
    }
  }
}

}  // namespace
}  // namespace apollo
