#include "orchestrator/reconciler.h"

#include <gtest/gtest.h>

namespace apollo::orchestrator {
namespace {

using S = TaskState;

store::NodeRow Row(const std::string& task, S state, uint32_t attempt, int64_t version = 3) {
  store::NodeRow r;
  r.task_id = task;
  r.node_id = "n1";
  r.state = state;
  r.attempt = attempt;
  r.version = version;
  return r;
}

TEST(ReconcilerTest, LegalPathsFollowTheStateMachine) {
  EXPECT_EQ(LegalPath(S::kDispatched, S::kSucceeded), (std::vector<S>{S::kRunning, S::kSucceeded}));
  EXPECT_EQ(LegalPath(S::kRetrying, S::kFailed), (std::vector<S>{S::kRunning, S::kFailed}));
  EXPECT_EQ(LegalPath(S::kRunning, S::kSucceeded), (std::vector<S>{S::kSucceeded}));
  EXPECT_TRUE(LegalPath(S::kSucceeded, S::kRunning).empty());  // never backwards
  EXPECT_TRUE(LegalPath(S::kRunning, S::kRunning).empty());
}

TEST(ReconcilerTest, ClassifiesEveryKindOfDrift) {
  NodeSnapshot snap;
  snap.node_id = "n1";
  snap.tasks = {
      {"behind", 1, S::kSucceeded, 10},      // store DISPATCHED: repair
      {"in-flight", 1, S::kSucceeded, 99},   // events above the HWM: wait
      {"ahead", 1, S::kRunning, 5},          // store SUCCEEDED: store wins
      {"same", 1, S::kRunning, 6},           // agrees
      {"old", 1, S::kFailed, 7},             // store is at attempt 2: fenced
      {"stranger", 1, S::kRunning, 8},       // store does not know it
  };
  std::vector<store::NodeRow> rows = {
      Row("behind", S::kDispatched, 1),     Row("in-flight", S::kRunning, 1),
      Row("ahead", S::kSucceeded, 1),       Row("same", S::kRunning, 1),
      Row("old", S::kRunning, 2),           Row("never-sent", S::kDispatched, 1),
      Row("lost-run", S::kRunning, 1),      Row("pending", S::kPending, 0),
  };
  auto drift = FindDrift(snap, rows, /*stored_hwm=*/50);
  std::map<std::string, DriftAction> by_task;
  for (const auto& d : drift) by_task[d.task_id] = d.action;
  EXPECT_EQ(by_task.at("behind"), DriftAction::kRepair);
  EXPECT_EQ(by_task.at("in-flight"), DriftAction::kInFlight);
  EXPECT_EQ(by_task.at("ahead"), DriftAction::kStoreAhead);
  EXPECT_EQ(by_task.at("stranger"), DriftAction::kUnknownToStore);
  EXPECT_EQ(by_task.at("never-sent"), DriftAction::kRedispatch);
  EXPECT_EQ(by_task.at("lost-run"), DriftAction::kFailLost);
  EXPECT_FALSE(by_task.count("same"));
  EXPECT_FALSE(by_task.count("old"));
  EXPECT_FALSE(by_task.count("pending"));
  for (const auto& d : drift) {
    if (d.task_id == "behind") {
      EXPECT_EQ(d.path, (std::vector<S>{S::kRunning, S::kSucceeded}));
    }
  }
}

TEST(ReconcilerTest, AnIncompleteSnapshotNeverFailsRunsItDoesNotList) {
  NodeSnapshot snap;
  snap.node_id = "n1";
  snap.complete = false;
  auto drift = FindDrift(snap, {Row("lost-run", S::kRunning, 1)}, 50);
  EXPECT_TRUE(drift.empty());
}

}  // namespace
}  // namespace apollo::orchestrator
