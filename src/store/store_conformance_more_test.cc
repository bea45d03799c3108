// The StateStore conformance suite, part 2: due work, nodes and selectors,
// retention, payloads, dead letters, orchestrator alerts, group commit
// under concurrency.
#include <gmock/gmock.h>

#include <map>
#include <mutex>
#include <thread>

#include "store/testing/store_fixture.h"

namespace apollo::store::testing {
namespace {

using ::testing::ElementsAre;
using std::chrono::seconds;

std::vector<std::pair<std::string, DueKind>> Due(StateStore& s, TimePoint now) {
  Result<std::vector<DueItem>> due = s.DueWork(now, 100);
  EXPECT_TRUE(due.ok()) << due.status().ToString();
  std::vector<std::pair<std::string, DueKind>> out;
  if (due.ok()) {
    for (const DueItem& d : *due) out.emplace_back(d.task_id, d.kind);
  }
  return out;
}

// Dispatch on create (the submit path, issue 18): the rows asked for are
// created DISPATCHED in the create's transaction, exactly as a dispatch
// pass would leave them; the rows that cannot start yet stay PENDING.
TEST_P(StoreConformanceTest, CreateDispatchesTheRowsThatCanStartInItsOwnTransaction) {
  NodeInfo n1{"n1", {}, {}, {}, "normal", "1.0", clock_.Now(), true, {}};
  ASSERT_TRUE(store().UpsertNode(n1).ok());
  const TimePoint ack_by = clock_.Now() + seconds(10);
  // n2 never registered; t2 depends on t1, which has not succeeded.
  NewTask fresh{Spec("t1", {"n1", "n2"}), {"n1", "n2"}, seconds(60), {"n1", "n2"}, ack_by};
  NewTask dep{Spec("t2", {"n1"}), {"n1"}, seconds(60), {"n1"}, ack_by};
  dep.spec.depends_on = {"t1"};
  std::vector<NewTask> tasks = {fresh, dep};
  Result<std::vector<CreatedTask>> r = store().CreateTasks(tasks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(r->at(0).dispatched, ElementsAre("n1"));
  EXPECT_TRUE(r->at(1).dispatched.empty());

  NodeRow sent = Row("t1", "n1");
  EXPECT_EQ(sent.state, TaskState::kDispatched);
  EXPECT_EQ(sent.version, 2);
  EXPECT_EQ(sent.attempt, 1u);
  EXPECT_EQ(sent.due_kind, DueKind::kAckTimeout);
  EXPECT_EQ(sent.due_at, ack_by);
  EXPECT_EQ(sent.start_deadline, clock_.Now() + seconds(60));
  EXPECT_EQ(sent.blocked_reason.rfind("awaiting_ack since ", 0), 0u) << sent.blocked_reason;
  NodeRow absent = Row("t1", "n2");
  EXPECT_EQ(absent.state, TaskState::kPending);
  EXPECT_EQ(absent.version, 1);
  EXPECT_EQ(absent.attempt, 0u);
  EXPECT_EQ(absent.blocked_reason, "node_not_registered");
  EXPECT_EQ(Row("t2", "n1").state, TaskState::kPending);
  EXPECT_EQ(store().GetTask("t1")->status, TaskState::kDispatched);
  EXPECT_EQ(store().GetTask("t2")->status, TaskState::kPending);

  // The history says both steps, in order, with the dispatch's version.
  Result<std::vector<HistoryRow>> h = store().GetHistory("t1");
  ASSERT_TRUE(h.ok());
  std::vector<std::tuple<Cause, TaskState, int64_t, uint32_t, std::string>> on_n1;
  for (const HistoryRow& e : *h) {
    if (e.node_id == "n1") on_n1.emplace_back(e.cause, e.to, e.version, e.attempt, e.detail);
  }
  EXPECT_THAT(on_n1, ElementsAre(std::tuple(Cause::kCreate, TaskState::kPending, 1, 0u, ""),
                                 std::tuple(Cause::kDispatch, TaskState::kDispatched, 2, 1u,
                                            "sent to n1")));

  // Not due for dispatch again: due at its ack deadline, like any sent row.
  auto due_on_n1 = [&](TimePoint at) {
    std::vector<std::pair<std::string, DueKind>> out;
    Result<std::vector<DueItem>> due = store().DueWork(at, 100);
    EXPECT_TRUE(due.ok()) << due.status().ToString();
    if (!due.ok()) return out;
    for (const DueItem& d : *due) {
      if (d.node_id == "n1") out.emplace_back(d.task_id, d.kind);
    }
    return out;
  };
  EXPECT_TRUE(due_on_n1(clock_.Now()).empty());
  EXPECT_THAT(due_on_n1(ack_by), ElementsAre(std::pair("t1", DueKind::kAckTimeout)));
  // The agent's answer to attempt 1 applies as after any dispatch.
  EXPECT_EQ(ApplyOk({Ev("t1", "n1", EventType::kAccepted, 1)}).outcomes[0].outcome,
            Outcome::kApplied);
  EXPECT_EQ(Row("t1", "n1").state, TaskState::kRunning);

  // A resubmission changes nothing and dispatches nothing.
  Result<std::vector<CreatedTask>> again = store().CreateTasks(tasks);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->at(0).created);
  EXPECT_TRUE(again->at(0).dispatched.empty());
  EXPECT_EQ(Row("t1", "n1").state, TaskState::kRunning);
}

TEST_P(StoreConformanceTest, DueWorkOfEveryKindFollowsTheClock) {
  Create({Spec("t1", {"n1"})}, {"n1"});
  EXPECT_THAT(Due(store(), clock_.Now()), ElementsAre(std::pair("t1", DueKind::kDispatch)));

  Move("t1", "n1", TaskState::kDispatched, Cause::kDispatch);  // ack deadline +10 s
  EXPECT_TRUE(Due(store(), clock_.Now()).empty());
  clock_.Advance(seconds(11));
  EXPECT_THAT(Due(store(), clock_.Now()), ElementsAre(std::pair("t1", DueKind::kAckTimeout)));

  ApplyOk({Ev("t1", "n1", EventType::kAccepted)});  // execution deadline +60 s
  EXPECT_TRUE(Due(store(), clock_.Now() + seconds(59)).empty());
  EXPECT_THAT(Due(store(), clock_.Now() + seconds(61)),
              ElementsAre(std::pair("t1", DueKind::kExecTimeout)));

  ApplyOk({Ev("t1", "n1", EventType::kFailed)});  // 2 retries left: decide now
  EXPECT_THAT(Due(store(), clock_.Now()), ElementsAre(std::pair("t1", DueKind::kRetryDecision)));

  Move("t1", "n1", TaskState::kRetrying, Cause::kRetry);  // next attempt +5 s
  EXPECT_TRUE(Due(store(), clock_.Now()).empty());
  EXPECT_EQ(Row("t1", "n1").blocked_reason.rfind("backoff until", 0), 0u);
  clock_.Advance(seconds(6));
  EXPECT_THAT(Due(store(), clock_.Now()), ElementsAre(std::pair("t1", DueKind::kRetry)));

  Move("t1", "n1", std::nullopt, Cause::kDispatch, std::nullopt, /*new_attempt=*/true);
  EXPECT_TRUE(Due(store(), clock_.Now()).empty());
  clock_.Advance(seconds(11));
  EXPECT_THAT(Due(store(), clock_.Now()), ElementsAre(std::pair("t1", DueKind::kAckTimeout)));
  ApplyOk({Ev("t1", "n1", EventType::kAccepted, 2)});
  ApplyOk({Ev("t1", "n1", EventType::kSucceeded, 2)});
  EXPECT_TRUE(Due(store(), clock_.Now() + seconds(3600)).empty());
}

TEST_P(StoreConformanceTest, DependentsBecomeDueOnlyWhenUpstreamSucceeds) {
  TaskSpec up = Spec("up", {"n1"});
  TaskSpec down = Spec("down", {"n1"});
  down.depends_on = {"up"};
  TaskSpec up2 = Spec("up2", {"n1"});
  up2.retry_policy.max_retries = 0;
  TaskSpec down2 = Spec("down2", {"n1"});
  down2.depends_on = {"up2"};
  Create({up, down, up2, down2}, {"n1"});
  EXPECT_THAT(Row("down", "n1").blocked_reason, ::testing::HasSubstr("deps_pending"));
  auto due = Due(store(), clock_.Now());
  EXPECT_EQ(due.size(), 2u);  // up and up2 only

  for (const char* t : {"up", "up2"}) Move(t, "n1", TaskState::kDispatched, Cause::kDispatch);
  ApplyOk({Ev("up", "n1", EventType::kAccepted), Ev("up2", "n1", EventType::kAccepted)});
  ApplyOk({Ev("up", "n1", EventType::kSucceeded), Ev("up2", "n1", EventType::kFailed)});
  EXPECT_THAT(Due(store(), clock_.Now()),
              ::testing::UnorderedElementsAre(std::pair("down", DueKind::kDispatch),
                                              std::pair("down2", DueKind::kUpstreamFailed)));
}

TEST_P(StoreConformanceTest, NodesAndSelectors) {
  NodeInfo a{"edge-a",
             {{"role", "worker"}},
             {"eu"},
             {"collect_metrics"},
             "normal",
             "1.0",
             clock_.Now(),
             true,
             {}};
  NodeInfo b{"edge-b", {{"role", "db"}}, {"eu", "us"}, {}, "normal", "1.0", std::nullopt, true, {}};
  ASSERT_TRUE(store().UpsertNode(a).ok());
  ASSERT_TRUE(store().UpsertNode(b).ok());
  Create({Spec("t1", {"ghost"})}, {"ghost"});  // never registered
  EXPECT_EQ(Row("t1", "ghost").blocked_reason, "node_not_registered");

  TargetSelector label;
  label.type = SelectorType::kLabel;
  label.key = "role";
  label.value = "worker";
  EXPECT_THAT(*store().ResolveSelector(label), ElementsAre("edge-a"));
  TargetSelector group;
  group.type = SelectorType::kGroup;
  group.group = "eu";
  EXPECT_THAT(*store().ResolveSelector(group), ElementsAre("edge-a", "edge-b"));
  TargetSelector ids;
  ids.nodes = {"edge-b", "ghost"};
  EXPECT_THAT(*store().ResolveSelector(ids), ElementsAre("edge-b", "ghost"));

  ASSERT_TRUE(store().RecordHeartbeat("edge-b", clock_.Now(), "conservative").ok());
  EXPECT_EQ(store().RecordHeartbeat("nobody", clock_.Now(), "").code(), StatusCode::kNotFound);
  // Batched: one transaction, unknown nodes skipped, the others recorded.
  const TimePoint later = clock_.Now() + seconds(7);
  std::vector<NodeHeartbeat> beats = {{"edge-a", later, ""}, {"nobody", later, "normal"}};
  Result<int> recorded = store().RecordHeartbeats(beats);
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(*recorded, 1);
  EXPECT_EQ(*store().RecordHeartbeats({}), 0);
  Result<std::vector<NodeInfo>> nodes = store().ListNodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ(nodes->at(0).labels, a.labels);
  ASSERT_TRUE(nodes->at(0).last_heartbeat.has_value());
  EXPECT_EQ(ToUnixMicros(*nodes->at(0).last_heartbeat), ToUnixMicros(later));
  EXPECT_EQ(nodes->at(0).mode, a.mode);  // an empty mode leaves it unchanged
  EXPECT_EQ(nodes->at(1).mode, "conservative");
  EXPECT_FALSE(nodes->at(2).registered);

  NodeInfo ghost{"ghost", {}, {}, {}, "normal", "1.0", clock_.Now(), true, {}};
  ASSERT_TRUE(store().UpsertNode(ghost).ok());
  EXPECT_EQ(Row("t1", "ghost").blocked_reason, "");
}

TEST_P(StoreConformanceTest, AnnotationsMoveDeadlinesWithoutANewVersion) {
  DriveTo("t1", "n1", TaskState::kDispatched);
  int64_t version = Row("t1", "n1").version;
  TransitionRequest r = Req("t1", "n1", std::nullopt, Cause::kAckTimeout);
  r.ack_deadline = clock_.Now() + seconds(100);
  r.blocked_reason = "node_lost since T";
  Result<std::vector<EventOutcome>> o = store().Transition({&r, 1});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->at(0).outcome, Outcome::kApplied);
  NodeRow row = Row("t1", "n1");
  EXPECT_EQ(row.version, version);
  EXPECT_EQ(row.blocked_reason, "node_lost since T");
  EXPECT_EQ(row.due_kind, DueKind::kAckTimeout);
  EXPECT_EQ(row.due_at, clock_.Now() + seconds(100));

  TransitionRequest nothing = Req("t1", "n1", std::nullopt, Cause::kOperator);
  EXPECT_EQ(store().Transition({&nothing, 1}).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreConformanceTest, HostileNodeDataIsStoredNotFatal) {
  NodeInfo n{
      "edge-x", {{"role", "bad\xff\xfe"}}, {"g\xc3"}, {}, "normal", "1.0", std::nullopt, true, {}};
  ASSERT_TRUE(store().UpsertNode(n).ok());
  Result<std::vector<NodeInfo>> nodes = store().ListNodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ(nodes->at(0).labels.count("role"), 1u);
}

TEST_P(StoreConformanceTest, RetentionNeverTouchesUnsettledTasks) {
  DriveTo("done", "n1", TaskState::kSucceeded);
  DriveTo("busy", "n1", TaskState::kRunning);
  DriveTo("failed-retryable", "n1", TaskState::kFailed);
  size_t busy_rows = store().GetHistory("busy")->size();
  size_t failed_rows = store().GetHistory("failed-retryable")->size();
  ASSERT_GT(store().GetHistory("done")->size(), 0u);

  clock_.Advance(std::chrono::hours(24 * 6));
  Result<PurgeStats> early = store().Purge({});
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->history_rows, 0);
  EXPECT_EQ(early->tasks, 0);

  clock_.Advance(std::chrono::hours(24 * 2));
  Result<PurgeStats> stats = store().Purge({});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->tasks, 1);  // "done", whole
  EXPECT_GT(stats->history_rows, 0);
  EXPECT_EQ(store().GetTask("done").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store().GetHistory("done")->empty());
  EXPECT_EQ(store().GetHistory("busy")->size(), busy_rows);
  EXPECT_EQ(store().GetHistory("failed-retryable")->size(), failed_rows);
  EXPECT_EQ(Row("busy", "n1").state, TaskState::kRunning);
}

TEST_P(StoreConformanceTest, OldDedupGapsArePurgedAndTheMarkMovesOn) {
  Create({Spec("t1", {"n1"})}, {"n1"});
  Event e = Ev("t1", "n1", EventType::kProgress);
  e.sequence_number = 5;  // 1..4 never arrive
  ApplyOk({e});
  EXPECT_EQ(*store().HighestStoredSeq("n1"), 0u);
  clock_.Advance(std::chrono::hours(25));
  Result<PurgeStats> stats = store().Purge({});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->dedup_rows, 1);
  EXPECT_EQ(*store().HighestStoredSeq("n1"), 5u);
  EXPECT_EQ(ApplyOk({e}).outcomes[0].outcome, Outcome::kDuplicate);
}

TEST_P(StoreConformanceTest, BigPayloadsRoundTrip) {
  DriveTo("t1", "n1", TaskState::kRunning);
  std::string big = R"({"metrics":")" + std::string(5000, 'x') + R"("})";
  ApplyOk({Ev("t1", "n1", EventType::kSucceeded, 1, big)});
  NodeRow row = Row("t1", "n1");
  EXPECT_EQ(row.result, big);
  ASSERT_TRUE(row.result_ref.has_value());
  EXPECT_EQ(*store().GetPayload(*row.result_ref), big);
  Result<std::vector<HistoryRow>> h = store().GetHistory("t1");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->back().payload, big);

  DriveTo("t2", "n1", TaskState::kRunning);
  ApplyOk({Ev("t2", "n1", EventType::kSucceeded, 1, R"({"small":1})")});
  EXPECT_EQ(Row("t2", "n1").result, R"({"small":1})");
  EXPECT_FALSE(Row("t2", "n1").result_ref.has_value());
}

TEST_P(StoreConformanceTest, DeadLetters) {
  DeadLetter d;
  d.event = Ev("t1", "n1", EventType::kAccepted);
  d.reason = "unknown task after retention";
  d.deliveries = 5;
  Result<int64_t> id = store().AddDeadLetter(d);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  Result<DeadLetter> got = store().GetDeadLetter(*id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->event.event_id(), d.event.event_id());
  EXPECT_EQ(got->reason, d.reason);
  EXPECT_EQ(got->deliveries, 5);
  EXPECT_EQ(store().ListDeadLetters(0, 10)->size(), 1u);
  EXPECT_TRUE(store().DropDeadLetter(*id).ok());
  EXPECT_EQ(store().DropDeadLetter(*id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(store().ListDeadLetters(0, 10)->empty());
}

TEST_P(StoreConformanceTest, OrchestratorAlertsAreKeptAsGiven) {
  Result<std::vector<AlertRow>> before = store().ListAlerts(0, 100);
  ASSERT_TRUE(before.ok());
  AlertRow a;
  a.kind = "unknown_to_store";
  a.task_id = "ghost-1";
  a.node_id = "edge-1";
  a.from = std::nullopt;
  a.to = TaskState::kRunning;
  a.detail = "the agent runs a task the store does not know";
  Result<int64_t> id = store().AddAlert(a);
  ASSERT_TRUE(id.ok()) << id.status().ToString();

  AlertRow queue;  // about the whole queue: no task, no node
  queue.kind = "queue_paused";
  queue.detail = "bad\xff bytes are stored, not fatal";
  Result<int64_t> id2 = store().AddAlert(queue);
  ASSERT_TRUE(id2.ok()) << id2.status().ToString();
  EXPECT_GT(*id2, *id);

  AlertRow nameless;
  EXPECT_EQ(store().AddAlert(nameless).status().code(), StatusCode::kInvalidArgument);

  int64_t last = before->empty() ? 0 : before->back().id;
  Result<std::vector<AlertRow>> after = store().ListAlerts(last, 100);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ(after->size(), 2u);
  EXPECT_EQ(after->at(0).id, *id);
  EXPECT_EQ(after->at(0).kind, "unknown_to_store");
  EXPECT_EQ(after->at(0).task_id, "ghost-1");
  EXPECT_EQ(after->at(0).node_id, "edge-1");
  EXPECT_FALSE(after->at(0).from.has_value());
  EXPECT_EQ(after->at(0).to.value_or(TaskState::kPending), TaskState::kRunning);
  EXPECT_EQ(after->at(0).detail, a.detail);
  EXPECT_EQ(after->at(0).at, clock_.Now());  // the store's clock
  EXPECT_EQ(after->at(1).kind, "queue_paused");
  EXPECT_TRUE(after->at(1).task_id.empty());
  EXPECT_FALSE(after->at(1).to.has_value());
}

TEST_P(StoreConformanceTest, ConcurrentCallersShareCommits) {
  constexpr int kThreads = 4;
  constexpr int kTasksPerThread = 50;
  std::vector<TaskSpec> specs;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kTasksPerThread; ++i) {
      specs.push_back(Spec("c" + std::to_string(t) + "-" + std::to_string(i), {}));
    }
  }
  std::vector<NewTask> tasks;
  for (const TaskSpec& s : specs) {
    tasks.push_back({s, {"cn" + s.task_id.substr(1, s.task_id.find('-') - 1)}});
  }
  ASSERT_TRUE(store().CreateTasks(tasks).ok());
  std::vector<TransitionRequest> reqs;
  for (const NewTask& t : tasks) {
    reqs.push_back(Req(t.spec.task_id, t.node_ids[0], TaskState::kDispatched, Cause::kDispatch));
  }
  ASSERT_TRUE(store().Transition(reqs).ok());
  int64_t commits_before = store().Stats().commits;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      std::string node = "cn" + std::to_string(t);
      for (int i = 0; i < kTasksPerThread; ++i) {
        Event e;
        e.task_id = "c" + std::to_string(t) + "-" + std::to_string(i);
        e.node_id = node;
        e.sequence_number = static_cast<uint64_t>(i + 1);
        e.attempt = 1;
        e.type = EventType::kAccepted;
        Result<ApplyResult> r = store().Apply({e});
        EXPECT_TRUE(r.ok() && r->outcomes[0].outcome == Outcome::kApplied);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  StoreStats stats = store().Stats();
  EXPECT_EQ(stats.events_applied, kThreads * kTasksPerThread);
  EXPECT_LE(stats.commits - commits_before, kThreads * kTasksPerThread);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(*store().HighestStoredSeq("cn" + std::to_string(t)),
              static_cast<uint64_t>(kTasksPerThread));
  }
}

// What GetTask reads, field by field (TaskRow has no operator==).
void ExpectSameTask(const TaskRow& got, const TaskRow& want) {
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.updated_at, want.updated_at);
  ASSERT_EQ(got.nodes.size(), want.nodes.size());
  for (size_t i = 0; i < got.nodes.size(); ++i) {
    const NodeRow& g = got.nodes[i];
    const NodeRow& w = want.nodes[i];
    SCOPED_TRACE(w.task_id + " on " + w.node_id);
    EXPECT_EQ(g.node_id, w.node_id);
    EXPECT_EQ(g.state, w.state);
    EXPECT_EQ(g.version, w.version);
    EXPECT_EQ(g.attempt, w.attempt);
    EXPECT_EQ(g.retries, w.retries);
    EXPECT_EQ(g.created_at, w.created_at);
    EXPECT_EQ(g.updated_at, w.updated_at);
    EXPECT_EQ(g.last_error, w.last_error);
    EXPECT_EQ(g.result, w.result);
    EXPECT_EQ(g.result_ref, w.result_ref);
    EXPECT_EQ(g.blocked_reason, w.blocked_reason);
    EXPECT_EQ(g.due_kind, w.due_kind);
    EXPECT_EQ(g.due_at, w.due_at);
    EXPECT_EQ(g.start_deadline, w.start_deadline);
    EXPECT_EQ(g.extensions, w.extensions);
    EXPECT_EQ(g.permanent, w.permanent);
    EXPECT_EQ(g.batch, w.batch);
  }
}

// The commit listener (state_store.h) is what lets a watcher skip reading a
// task after each commit of agent events: the copy it read, caught up with
// what the listener was told (store::CatchUp), must be what GetTask reads
// after the commit; where the change cannot stand alone, CatchUp says so.
TEST_P(StoreConformanceTest, TheCommitListenerIsToldWhatGetTaskReadsAfterTheCommit) {
  std::mutex mu;
  std::map<std::string, TaskChange> told;
  int calls = 0;
  store().SetCommitListener([&](std::span<const TaskChange> changes) {
    std::lock_guard<std::mutex> lock(mu);
    ++calls;
    for (const TaskChange& c : changes) told[c.task_id] = c;
  });
  Create({Spec("ok", {"n1"}), Spec("fail", {"n1"}), Spec("big", {"n1"})}, {"n1"});
  Create({Spec("pair", {"n1", "n2"})}, {"n1", "n2"});
  for (const char* t : {"ok", "fail", "big", "pair"}) {
    Move(t, "n1", TaskState::kDispatched, Cause::kDispatch);
  }
  Move("pair", "n2", TaskState::kDispatched, Cause::kDispatch);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(calls, 0) << "only commits of agent events are told";
  }
  std::map<std::string, TaskRow> before;
  for (const char* t : {"ok", "fail", "big", "pair"}) before[t] = *store().GetTask(t);

  clock_.Advance(std::chrono::seconds(3));
  const std::string big_result = R"({"result":")" + std::string(2000, 'x') + R"("})";
  ApplyOk({Ev("ok", "n1", EventType::kAccepted),
           Ev("ok", "n1", EventType::kSucceeded, 1, R"({"result":{"x":1}})"),
           Ev("fail", "n1", EventType::kAccepted),
           Ev("fail", "n1", EventType::kFailed, 1, R"({"error":"disk full"})"),
           Ev("big", "n1", EventType::kSucceeded, 1, big_result),
           Ev("pair", "n1", EventType::kSucceeded, 1, "{}")});
  std::map<std::string, TaskChange> got;
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(calls, 1) << "one commit, one call";
    got = told;
  }
  ASSERT_EQ(got.size(), 4u);

  for (const char* t : {"ok", "fail"}) {
    SCOPED_TRACE(t);
    TaskRow after = *store().GetTask(t);
    TaskRow copy = before[t];
    ASSERT_TRUE(CatchUp(copy, got[t]));
    ExpectSameTask(copy, after);
    // Told again (or late, after a read that holds it): nothing changes.
    ASSERT_TRUE(CatchUp(copy, got[t]));
    ExpectSameTask(copy, after);
    TaskRow fresh = after;
    ASSERT_TRUE(CatchUp(fresh, got[t]));
    ExpectSameTask(fresh, after);
  }
  EXPECT_EQ(got["ok"].status, TaskState::kSucceeded);
  EXPECT_EQ(got["fail"].nodes.at(0).last_error, "disk full");

  // A result kept in the payload table, and a change covering one node of
  // two: the watcher must read; the copy is left as it was.
  for (const char* t : {"big", "pair"}) {
    SCOPED_TRACE(t);
    TaskRow copy = before[t];
    EXPECT_FALSE(CatchUp(copy, got[t]));
    ExpectSameTask(copy, before[t]);
  }
  EXPECT_EQ(got["pair"].node_count, 2);
  // A copy that missed a commit in between (here: older than the change's
  // starting version) cannot be brought up by this one alone.
  {
    TaskRow behind = before["ok"];
    behind.nodes.at(0).version -= 1;
    EXPECT_FALSE(CatchUp(behind, got["ok"]));
  }
  EXPECT_FALSE(CatchUp(before["ok"], got["fail"])) << "another task's change";

  store().SetCommitListener(nullptr);
  ApplyOk({Ev("pair", "n2", EventType::kSucceeded, 1, "{}")});
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(calls, 1) << "a cleared listener is not called";
}

TEST(OpenStateStoreTest, RejectsBadUrls) {
  ManualClock clock;
  EXPECT_EQ(OpenStateStore("mysql://x", {}, clock).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStateStore("sqlite://relative/no-dot.db", {}, clock).status().code(),
            StatusCode::kInvalidArgument);
  StoreOptions bad;
  bad.sqlite_synchronous = "OFF";
  EXPECT_EQ(OpenStateStore("sqlite:///tmp/apollo-never.db", bad, clock).status().code(),
            StatusCode::kInvalidArgument);
}

// The dispatch queue's depth (the submit watermarks' measure) counts the
// rows still to run — PENDING, DISPATCHED, RETRYING — and none of the
// others, whatever their number; it follows a row into and out of the queue.
TEST_P(StoreConformanceTest, QueueDepthCountsTheRowsStillToRun) {
  std::map<TaskState, int> per_state = {{TaskState::kPending, 2},   {TaskState::kDispatched, 3},
                                        {TaskState::kRunning, 1},   {TaskState::kSucceeded, 4},
                                        {TaskState::kFailed, 1},    {TaskState::kRetrying, 2},
                                        {TaskState::kCancelled, 1}, {TaskState::kTimeout, 1}};
  int n = 0;
  for (const auto& [state, count] : per_state) {
    for (int i = 0; i < count; ++i) {
      const std::string task = "t" + std::to_string(++n);
      DriveTo(task, "n1", state);
      ASSERT_EQ(Row(task, "n1").state, state) << task;
    }
  }
  Result<int64_t> depth = store().QueueDepth();
  ASSERT_TRUE(depth.ok()) << depth.status().ToString();
  EXPECT_EQ(*depth, 2 + 3 + 2);

  Move("t1", "n1", TaskState::kDispatched, Cause::kDispatch);  // still queued
  EXPECT_EQ(*store().QueueDepth(), 7);
  ApplyOk({Ev("t1", "n1", EventType::kAccepted)});  // out of the queue
  EXPECT_EQ(*store().QueueDepth(), 6);
  Create({Spec("late", {"n2"})}, {"n2"});  // a new row joins it
  EXPECT_EQ(*store().QueueDepth(), 7);
}

}  // namespace
}  // namespace apollo::store::testing
