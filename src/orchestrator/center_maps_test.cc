// Every per-task and per-node map of the center shrinks when its task
// settles or its node goes away (issue 17, bounded resources): sessions and
// snapshots leave with the node's session, blocked reasons with the task,
// circuit breakers at their bound.
#include <gtest/gtest.h>

#include <thread>

#include "orchestrator/orchestrator.h"
#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

using std::chrono::seconds;

TaskSpec Spec(const std::string& id, const std::string& node) {
  TaskSpec s;
  s.task_id = id;
  s.intent = "collect_metrics";
  s.target_selector.type = SelectorType::kNodes;
  s.target_selector.nodes = {node};
  s.timeout = seconds(60);
  return s;
}

class CenterMapsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(temp_.status().ok()) << temp_.status().ToString(); }

  std::shared_ptr<SessionHandle> Connect(const std::string& node) {
    auto handle = std::make_shared<SessionHandle>(node);
    apollo::v1::Hello hello;
    hello.set_node_id(node);
    apollo::v1::Welcome welcome;
    EXPECT_TRUE(brain_.OnHello(handle, hello, &welcome).ok());
    apollo::v1::Snapshot snap;
    snap.set_complete(true);
    brain_.OnSnapshot(handle, snap);
    return handle;
  }
  // Waits (bounded) until `pred` holds on the dispatch loop's work.
  template <typename Pred>
  bool WaitFor(Pred pred) {
    for (int i = 0; i < 500; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  ManualClock clock_;
  testing::TempStore temp_{clock_};
  store::StateStore* store_ = temp_.store();
  OrchestratorOptions options_ = [] {
    OrchestratorOptions o;
    o.dispatch_interval = std::chrono::milliseconds(10);
    o.default_start_timeout = seconds(0);
    return o;
  }();
  Orchestrator brain_{options_, *store_, clock_};
};

TEST_F(CenterMapsTest, ANodesSessionAndSnapshotGoWithIt) {
  std::vector<std::shared_ptr<SessionHandle>> handles;
  for (int n = 0; n < 50; ++n) handles.push_back(Connect("edge-" + std::to_string(n)));
  EXPECT_EQ(brain_.memo_sizes().sessions, 50u);
  EXPECT_EQ(brain_.memo_sizes().snapshots, 50u);
  for (auto& h : handles) brain_.OnDisconnect(h);
  EXPECT_EQ(brain_.memo_sizes().sessions, 0u);
  EXPECT_EQ(brain_.memo_sizes().snapshots, 0u);
  auto r = brain_.Reconcile("edge-1", /*dry_run=*/true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->nodes_without_snapshot, std::vector<std::string>{"edge-1"});  // not a stale one
}

TEST_F(CenterMapsTest, AReplacedSessionsEndKeepsTheNewOnesSnapshot) {
  auto old_session = Connect("edge-1");
  auto new_session = Connect("edge-1");  // a reconnect replaces the old stream
  brain_.OnDisconnect(old_session);      // the old stream ends afterwards
  EXPECT_EQ(brain_.memo_sizes().sessions, 1u);
  EXPECT_EQ(brain_.memo_sizes().snapshots, 1u);
  brain_.OnDisconnect(new_session);
  EXPECT_EQ(brain_.memo_sizes().snapshots, 0u);
}

TEST_F(CenterMapsTest, BlockedReasonsGoWhenTheTaskSettles) {
  // Tasks for a node that registered once and is not connected: the
  // dispatcher records why each waits (node_disconnected) and remembers
  // it, per (task, node).
  store::NodeInfo ghost;
  ghost.node_id = "ghost";
  ghost.intents = {"collect_metrics"};
  ASSERT_TRUE(store_->UpsertNode(ghost).ok());
  std::vector<store::NewTask> tasks;
  for (int t = 0; t < 20; ++t) {
    tasks.push_back({Spec("held-" + std::to_string(t), "ghost"), {"ghost"}, seconds(0)});
  }
  ASSERT_TRUE(store_->CreateTasks(tasks).ok());
  brain_.TasksStored(tasks);
  brain_.Start();
  brain_.Kick();
  ASSERT_TRUE(WaitFor([&] { return brain_.memo_sizes().blocked == 20; }))
      << brain_.memo_sizes().blocked;
  // An operator cancels them (as ApiService::CancelTask does).
  for (const auto& t : tasks) {
    store::TransitionRequest r;
    r.task_id = t.spec.task_id;
    r.node_id = "ghost";
    r.to = TaskState::kCancelled;
    r.cause = store::Cause::kCancel;
    ASSERT_TRUE(store_->Transition(std::span<const store::TransitionRequest>(&r, 1)).ok());
    brain_.TaskMayHaveSettled(t.spec.task_id);
  }
  EXPECT_EQ(brain_.memo_sizes().blocked, 0u);
  brain_.Stop();
}

TEST_F(CenterMapsTest, ARowThatAlreadySaysWhyItWaitsIsNotWrittenAgain) {
  // The create says node_not_registered for a node never seen; the center's
  // passes, and a second center started on the same store, add nothing.
  std::vector<store::NewTask> tasks;
  for (int t = 0; t < 5; ++t) {
    tasks.push_back({Spec("waits-" + std::to_string(t), "never"), {"never"}, seconds(0)});
  }
  ASSERT_TRUE(store_->CreateTasks(tasks).ok());
  auto history = [&](const std::string& id) {
    auto h = store_->GetHistory(id);
    EXPECT_TRUE(h.ok());
    return h.ok() ? h->size() : 0u;
  };
  const size_t before = history("waits-0");
  ASSERT_GE(before, 1u);
  auto row = store_->ListNodeTasks("never", 10);
  ASSERT_TRUE(row.ok());
  ASSERT_EQ(row->size(), 5u);
  for (const auto& r : *row) EXPECT_EQ(r.blocked_reason, "node_not_registered");
  for (int run = 0; run < 2; ++run) {
    Orchestrator center(options_, *store_, clock_);
    center.Start();
    center.Kick();
    // Passes every 10 ms: some 30 of them look at the rows.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(center.memo_sizes().blocked, 0u);
    center.Stop();
  }
  for (const auto& t : tasks) EXPECT_EQ(history(t.spec.task_id), before) << t.spec.task_id;
}

TEST(CircuitBreakersBoundTest, TheMapStaysBoundedAndOpenBreakersStay) {
  ManualClock clock;
  CircuitBreakers b(/*failures_to_open=*/2, seconds(30), /*max_entries=*/4);
  EXPECT_FALSE(b.Record("broken", false, clock.Now()));
  EXPECT_TRUE(b.Record("broken", false, clock.Now()));  // open
  for (int i = 0; i < 100; ++i) {
    b.Record("intent-" + std::to_string(i), i % 2 == 0, clock.Now());
    EXPECT_LE(b.size(), 4u);
  }
  EXPECT_FALSE(b.Allow("broken", clock.Now()));  // never forgotten while open
  bool listed = false;
  for (const auto& info : b.List()) listed |= info.intent == "broken";
  EXPECT_TRUE(listed);
  // Every slot open: a new intent is not tracked, and is allowed.
  CircuitBreakers full(1, seconds(30), 2);
  EXPECT_TRUE(full.Record("a", false, clock.Now()));
  EXPECT_TRUE(full.Record("b", false, clock.Now()));
  EXPECT_FALSE(full.Record("c", false, clock.Now()));
  EXPECT_TRUE(full.Allow("c", clock.Now()));
  EXPECT_EQ(full.size(), 2u);
}

}  // namespace
}  // namespace apollo::orchestrator
