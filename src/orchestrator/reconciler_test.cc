#include "orchestrator/reconciler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "apollo/v1/agent.pb.h"
#include "orchestrator/orchestrator.h"
#include "store/open_store.h"

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
  // Only the retry policy enters RETRYING: a judged run is not walked back.
  EXPECT_TRUE(LegalPath(S::kTimeout, S::kSucceeded).empty());
  EXPECT_TRUE(LegalPath(S::kFailed, S::kRunning).empty());
}

TEST(ReconcilerTest, ClassifiesEveryKindOfDrift) {
  NodeSnapshot snap;
  snap.node_id = "n1";
  snap.tasks = {
      {"behind", 1, S::kSucceeded, 10},     // store DISPATCHED: repair
      {"in-flight", 1, S::kSucceeded, 99},  // events above the HWM: wait
      {"ahead", 1, S::kRunning, 5},         // store SUCCEEDED: store wins
      {"same", 1, S::kRunning, 6},          // agrees
      {"old", 1, S::kFailed, 7},            // store is at attempt 2: fenced
      {"stranger", 1, S::kRunning, 8},      // store does not know it
      {"purged", 1, S::kSucceeded, 9},      // finished, stored, then purged
      {"lost-end", 1, S::kSucceeded, 60},   // finished, events not stored
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
  EXPECT_FALSE(by_task.count("purged")) << "retention purged it: no drift";
  EXPECT_EQ(by_task.at("lost-end"), DriftAction::kUnknownToStore);
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

// The chaos run that found it: attempt 1 ran past its timeout on a cut-off
// node, the center judged it TIMEOUT and granted a retry; the node came back
// still running attempt 1. Its report must not move the row (RETRYING ->
// RUNNING would let attempt 1's SUCCEEDED through the fence).
TEST(ReconcilerTest, AJudgedAttemptIsFencedFromRepair) {
  NodeSnapshot snap;
  snap.node_id = "n1";
  snap.tasks = {{"judged", 1, S::kRunning, 10},       // retry granted, not sent
                {"timed-out", 1, S::kSucceeded, 11},  // TIMEOUT, retry not decided
                {"resent", 2, S::kRunning, 12}};      // the retry's own run
  store::NodeRow judged = Row("judged", S::kRetrying, 1);
  judged.due_kind = store::DueKind::kRetry;
  store::NodeRow resent = Row("resent", S::kRetrying, 2);
  resent.due_kind = store::DueKind::kAckTimeout;
  auto drift = FindDrift(snap, {judged, Row("timed-out", S::kTimeout, 1), resent}, 50);
  std::map<std::string, DriftItem> by_task;
  for (const auto& d : drift) by_task[d.task_id] = d;
  ASSERT_EQ(by_task.count("judged"), 1u);
  EXPECT_EQ(by_task.at("judged").action, DriftAction::kStoreAhead);
  EXPECT_TRUE(by_task.at("judged").path.empty());
  ASSERT_EQ(by_task.count("timed-out"), 1u);
  EXPECT_EQ(by_task.at("timed-out").action, DriftAction::kStoreAhead);
  ASSERT_EQ(by_task.count("resent"), 1u);
  EXPECT_EQ(by_task.at("resent").action, DriftAction::kRepair);
  EXPECT_EQ(by_task.at("resent").path, (std::vector<S>{S::kRunning}));
}

TEST(ReconcilerTest, AnIncompleteSnapshotNeverFailsRunsItDoesNotList) {
  NodeSnapshot snap;
  snap.node_id = "n1";
  snap.complete = false;
  auto drift = FindDrift(snap, {Row("lost-run", S::kRunning, 1)}, 50);
  EXPECT_TRUE(drift.empty());
}

// A task the agent runs that the store does not know: one alert row naming
// node and task, counted, and not repeated by the next snapshot.
TEST(ReconcilerTest, UnknownToStoreWritesOneAlertRowPerTask) {
  char tmpl[] = "/tmp/apollo-reconciler-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ManualClock clock;
  {
    auto store = store::OpenStateStore("sqlite://" + dir + "/s.db", {}, clock);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    std::vector<std::string> logged;
    OrchestratorOptions options;
    options.alert = [&](const std::string& line) { logged.push_back(line); };
    Orchestrator orch(options, **store, clock);
    auto handle = std::make_shared<SessionHandle>("edge-9");  // no stream: sends are dropped

    apollo::v1::Snapshot snap;
    snap.set_complete(true);
    auto* t = snap.add_tasks();
    t->set_task_id("stranger-1");
    t->set_attempt(1);
    t->set_status("RUNNING");
    t->set_last_seq(1);
    orch.OnSnapshot(handle, snap);
    orch.OnSnapshot(handle, snap);  // the next sync: same drift, no second alert

    auto alerts = (*store)->ListAlerts(0, 100);
    ASSERT_TRUE(alerts.ok()) << alerts.status().ToString();
    ASSERT_EQ(alerts->size(), 1u);
    EXPECT_EQ(alerts->at(0).kind, "unknown_to_store");
    EXPECT_EQ(alerts->at(0).node_id, "edge-9");
    EXPECT_EQ(alerts->at(0).task_id, "stranger-1");
    EXPECT_EQ(alerts->at(0).to.value_or(S::kPending), S::kRunning);
    EXPECT_NE(alerts->at(0).detail.find("stranger-1"), std::string::npos);
    EXPECT_EQ(orch.reconcile_alerts(), 1);
    ASSERT_EQ(logged.size(), 1u);
    EXPECT_NE(logged[0].find("edge-9"), std::string::npos);

    // A dry run reports the drift but writes nothing.
    auto dry = orch.Reconcile("edge-9", /*dry_run=*/true);
    ASSERT_TRUE(dry.ok());
    ASSERT_EQ(dry->drift.size(), 1u);
    EXPECT_EQ(dry->drift[0].action, DriftAction::kUnknownToStore);
    EXPECT_EQ(dry->alerts, 0);
    EXPECT_EQ((*store)->ListAlerts(0, 100)->size(), 1u);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace apollo::orchestrator
