// Conformance, part 5: the lifecycle of issue 16 (schedule-to-start
// deadlines, permanent failures, compensation, extensions, the order of due
// work, retention of whole tasks) and the operator access of issue 17
// (tokens, audit, alert delivery). Runs against every backend.
#include <gmock/gmock.h>

#include "store/testing/store_fixture.h"

namespace apollo::store::testing {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Creates `id` on `node` with a schedule-to-start deadline.
void CreateWithStart(StateStore& store, const TaskSpec& spec, const std::string& node,
                     seconds start_timeout) {
  std::vector<NewTask> tasks = {{spec, {node}, start_timeout}};
  Result<std::vector<CreatedTask>> r = store.CreateTasks(tasks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

std::optional<DueItem> DueOf(StateStore& store, TimePoint now, const std::string& task) {
  Result<std::vector<DueItem>> due = store.DueWork(now, 100);
  EXPECT_TRUE(due.ok());
  for (const DueItem& d : *due) {
    if (d.task_id == task) return d;
  }
  return std::nullopt;
}

TEST_P(StoreConformanceTest, StartDeadlineFollowsTheRowUntilItRuns) {
  CreateWithStart(store(), Spec("t1", {"n1"}), "n1", seconds(3));
  NodeRow row = Row("t1", "n1");
  ASSERT_TRUE(row.start_deadline.has_value());
  EXPECT_EQ(*row.start_deadline, clock_.Now() + seconds(3));
  Result<TaskRow> task = store().GetTask("t1");
  EXPECT_EQ(task->start_timeout, seconds(3));

  // Dispatched with a 10 s ack deadline: due at the earlier start deadline.
  clock_.Advance(seconds(1));
  Move("t1", "n1", TaskState::kDispatched, Cause::kDispatch);
  EXPECT_EQ(Row("t1", "n1").due_at, clock_.Now() + seconds(2));
  std::optional<DueItem> due = DueOf(store(), clock_.Now() + seconds(2), "t1");
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->start_deadline, clock_.Now() + seconds(2));

  // Not started in time: DISPATCHED -> TIMEOUT, then a retry gets a fresh one.
  clock_.Advance(seconds(3));
  EXPECT_EQ(Move("t1", "n1", TaskState::kTimeout, Cause::kNotStarted).outcome, Outcome::kApplied);
  EXPECT_EQ(Row("t1", "n1").due_kind, DueKind::kRetryDecision);
  EXPECT_FALSE(Row("t1", "n1").start_deadline.has_value());
  Move("t1", "n1", TaskState::kRetrying, Cause::kRetry);  // next attempt in 5 s
  EXPECT_EQ(Row("t1", "n1").start_deadline, clock_.Now() + seconds(5 + 3));
  Move("t1", "n1", std::nullopt, Cause::kDispatch, std::nullopt, /*new_attempt=*/true);
  EXPECT_EQ(Row("t1", "n1").start_deadline, clock_.Now() + seconds(5 + 3));  // a resend keeps it
  ApplyOk({Ev("t1", "n1", EventType::kAccepted, 2)});
  EXPECT_FALSE(Row("t1", "n1").start_deadline.has_value());  // running: no deadline

  // A PENDING row that never left may time out too.
  CreateWithStart(store(), Spec("t2", {"n1"}), "n1", seconds(3));
  clock_.Advance(seconds(4));
  EXPECT_EQ(Move("t2", "n1", TaskState::kTimeout, Cause::kNotStarted).outcome, Outcome::kApplied);
  Result<std::vector<HistoryRow>> h = store().GetHistory("t2");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->back().cause, Cause::kNotStarted);

  // Dependents get their deadline when they are released, not at creation.
  TaskSpec up = Spec("up", {"n1"});
  TaskSpec down = Spec("down", {"n1"});
  down.depends_on = {"up"};
  ASSERT_TRUE(
      store()
          .CreateTasks(std::vector<NewTask>{{up, {"n1"}, seconds(0)}, {down, {"n1"}, seconds(7)}})
          .ok());
  EXPECT_FALSE(Row("down", "n1").start_deadline.has_value());
  Move("up", "n1", TaskState::kDispatched, Cause::kDispatch);
  ApplyOk({Ev("up", "n1", EventType::kAccepted), Ev("up", "n1", EventType::kSucceeded)});
  EXPECT_EQ(Row("down", "n1").start_deadline, clock_.Now() + seconds(7));
}

TEST_P(StoreConformanceTest, APermanentFailureIsNotRetriedButAnOperatorMayRetryIt) {
  DriveTo("t1", "n1", TaskState::kRunning);  // 2 retries allowed
  ApplyOk({Ev("t1", "n1", EventType::kFailed, 1,
              R"({"error": "unknown intent 'colect_metrics'", "kind": "permanent"})")});
  NodeRow row = Row("t1", "n1");
  EXPECT_EQ(row.state, TaskState::kFailed);
  EXPECT_TRUE(row.permanent);
  EXPECT_EQ(row.due_kind, DueKind::kNone);
  EXPECT_EQ(row.last_error, "unknown intent 'colect_metrics'");
  EXPECT_EQ(store().GetTask("t1")->status, TaskState::kFailed);
  EXPECT_FALSE(DueOf(store(), clock_.Now() + seconds(3600), "t1").has_value());

  EXPECT_EQ(Move("t1", "n1", TaskState::kRetrying, Cause::kOperator).outcome, Outcome::kApplied);
  EXPECT_FALSE(Row("t1", "n1").permanent);

  DriveTo("t2", "n1", TaskState::kRunning);
  ApplyOk({Ev("t2", "n1", EventType::kFailed, 1, R"({"error": "exit 1", "kind": "transient"})")});
  EXPECT_EQ(Row("t2", "n1").due_kind, DueKind::kRetryDecision);
}

TEST_P(StoreConformanceTest, AFinalFailureOfATaskWithOnFailureIsDueForCompensation) {
  TaskSpec spec = Spec("t1", {"n1"});
  spec.retry_policy.max_retries = 0;
  spec.on_failure = CompensationSpec{"rollback", nlohmann::json::object(), seconds(0)};
  Create({spec}, {"n1"});
  Move("t1", "n1", TaskState::kDispatched, Cause::kDispatch);
  ApplyOk({Ev("t1", "n1", EventType::kAccepted), Ev("t1", "n1", EventType::kFailed)});
  std::optional<DueItem> due = DueOf(store(), clock_.Now(), "t1");
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->kind, DueKind::kCompensate);

  TransitionRequest done = Req("t1", "n1", std::nullopt, Cause::kCompensation);
  done.compensated = true;
  done.detail = "compensation t1-undo-n1 started";
  Result<std::vector<EventOutcome>> o = store().Transition({&done, 1});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->at(0).outcome, Outcome::kApplied);
  EXPECT_FALSE(DueOf(store(), clock_.Now() + seconds(3600), "t1").has_value());
  Result<std::vector<HistoryRow>> h = store().GetHistory("t1");
  EXPECT_EQ(h->back().cause, Cause::kCompensation);
  EXPECT_EQ(h->back().detail, "compensation t1-undo-n1 started");

  // Without on_failure, a final failure is due for nothing.
  TaskSpec plain = Spec("t2", {"n1"});
  plain.retry_policy.max_retries = 0;
  Create({plain}, {"n1"});
  Move("t2", "n1", TaskState::kDispatched, Cause::kDispatch);
  ApplyOk({Ev("t2", "n1", EventType::kAccepted), Ev("t2", "n1", EventType::kFailed)});
  EXPECT_FALSE(DueOf(store(), clock_.Now() + seconds(3600), "t2").has_value());
}

// A cancel made through a follower: the row is CANCELLED at once and due
// for the leader to tell the agent (kDeliverCancel) until it says it did;
// a cancel without the flag (the leader's own, sent on the spot) is due
// for nothing.
TEST_P(StoreConformanceTest, ACancelThroughAFollowerIsDueForDeliveryUntilDelivered) {
  DriveTo("t1", "n1", TaskState::kRunning);
  TransitionRequest cancel = Req("t1", "n1", TaskState::kCancelled, Cause::kCancel);
  cancel.deliver_cancel = true;
  cancel.detail = "cancelled by an operator";
  Result<std::vector<EventOutcome>> o = store().Transition({&cancel, 1});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->at(0).outcome, Outcome::kApplied);
  EXPECT_EQ(Row("t1", "n1").state, TaskState::kCancelled);
  std::optional<DueItem> due = DueOf(store(), clock_.Now(), "t1");
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->kind, DueKind::kDeliverCancel);
  EXPECT_EQ(due->state, TaskState::kCancelled);
  EXPECT_EQ(due->attempt, 1u);

  TransitionRequest done = Req("t1", "n1", std::nullopt, Cause::kCancel);
  done.cancel_delivered = true;
  done.detail = "cancel sent to n1";
  o = store().Transition({&done, 1});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->at(0).outcome, Outcome::kApplied);
  EXPECT_FALSE(DueOf(store(), clock_.Now() + seconds(3600), "t1").has_value());
  EXPECT_EQ(Row("t1", "n1").state, TaskState::kCancelled);
  Result<std::vector<HistoryRow>> h = store().GetHistory("t1");
  EXPECT_EQ(h->back().detail, "cancel sent to n1");

  DriveTo("t2", "n1", TaskState::kRunning);
  EXPECT_EQ(Move("t2", "n1", TaskState::kCancelled, Cause::kCancel).outcome, Outcome::kApplied);
  EXPECT_FALSE(DueOf(store(), clock_.Now() + seconds(3600), "t2").has_value());
}

TEST_P(StoreConformanceTest, AnExtensionMovesTheExecutionDeadlineAndCounts) {
  DriveTo("t1", "n1", TaskState::kRunning);  // 60 s timeout
  TransitionRequest ext = Req("t1", "n1", std::nullopt, Cause::kExtended);
  ext.exec_deadline = clock_.Now() + seconds(90);
  ext.extend = true;
  ext.detail = "extended by 30 s: progress 0.4 -> 0.6";
  int64_t version = Row("t1", "n1").version;
  ASSERT_EQ(store().Transition({&ext, 1})->at(0).outcome, Outcome::kApplied);
  NodeRow row = Row("t1", "n1");
  EXPECT_EQ(row.due_kind, DueKind::kExecTimeout);
  EXPECT_EQ(row.due_at, clock_.Now() + seconds(90));
  EXPECT_EQ(row.extensions, 1);
  EXPECT_EQ(row.version, version);  // bookkeeping, no new version
  EXPECT_EQ(store().GetHistory("t1")->back().detail, "extended by 30 s: progress 0.4 -> 0.6");

  DriveTo("t2", "n1", TaskState::kDispatched);
  TransitionRequest bad = Req("t2", "n1", std::nullopt, Cause::kExtended);
  bad.exec_deadline = clock_.Now() + seconds(90);
  EXPECT_EQ(store().Transition({&bad, 1})->at(0).outcome, Outcome::kIllegalTransition);
}

TEST_P(StoreConformanceTest, DueWorkIsHighPriorityFirstThenByDueTime) {
  TaskSpec low = Spec("low", {"n1"});
  low.priority = Priority::kLow;
  TaskSpec high = Spec("high", {"n1"});
  high.priority = Priority::kHigh;
  TaskSpec normal = Spec("normal", {"n1"});
  Create({low}, {"n1"});
  clock_.Advance(seconds(1));
  Create({normal}, {"n1"});
  clock_.Advance(seconds(1));
  Create({high}, {"n1"});
  Result<std::vector<DueItem>> due = store().DueWork(clock_.Now(), 10);
  ASSERT_TRUE(due.ok());
  std::vector<std::string> order;
  for (const DueItem& d : *due) order.push_back(d.task_id);
  EXPECT_THAT(order, ElementsAre("high", "normal", "low"));
  Result<std::vector<DueItem>> two = store().DueWork(clock_.Now(), 2);
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ(two->at(1).task_id, "normal");
}

TEST_P(StoreConformanceTest, TasksFilterByMetadataAndCarryIt) {
  TaskSpec a = Spec("a", {"n1"});
  a.metadata = {{"ticket", "CHG-1"}, {"owner", "ops"}};
  TaskSpec b = Spec("b", {"n1"});
  b.metadata = {{"ticket", "CHG-2"}, {"owner", "ops"}};
  Create({a, b}, {"n1"});
  TaskQuery q;
  q.metadata = {{"ticket", "CHG-2"}};
  Result<TaskPage> page = store().ListTasks(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->tasks.size(), 1u);
  EXPECT_EQ(page->tasks[0].task_id, "b");
  EXPECT_EQ(page->tasks[0].metadata.at("owner"), "ops");
  q.metadata = {{"owner", "ops"}, {"ticket", "CHG-1"}};
  EXPECT_EQ(store().ListTasks(q)->tasks.size(), 1u);
  q.metadata = {{"owner", "nobody"}};
  EXPECT_TRUE(store().ListTasks(q)->tasks.empty());
  q.metadata = {{"a", "1"}, {"b", "1"}, {"c", "1"}, {"d", "1"}, {"e", "1"}};
  EXPECT_EQ(store().ListTasks(q).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreConformanceTest, NodesKeepTheIntentsTheyRunAndTheOnesTheyDisabled) {
  NodeInfo n{"edge-a", {}, {}, {"noop", "sleep"}, "normal", "1.0", clock_.Now(), true, {"exec"}};
  ASSERT_TRUE(store().UpsertNode(n).ok());
  Result<std::vector<NodeInfo>> nodes = store().ListNodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_THAT(nodes->at(0).intents, ElementsAre("noop", "sleep"));
  EXPECT_THAT(nodes->at(0).disabled_intents, ElementsAre("exec"));
}

TEST_P(StoreConformanceTest, AlertDeliveriesAreDueUntilDeliveredOrGivenUp) {
  AlertRow a;
  a.kind = "dead_letter";
  a.detail = "poison event";
  Result<int64_t> id = store().AddAlert(a);
  ASSERT_TRUE(id.ok());
  Result<std::vector<AlertRow>> due = store().DueAlertDeliveries(clock_.Now(), 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ(due->at(0).delivery, AlertDelivery::kPending);

  ASSERT_TRUE(
      store()
          .SetAlertDelivery(*id, AlertDelivery::kFailing, 1, "HTTP 503", clock_.Now() + seconds(10))
          .ok());
  EXPECT_TRUE(store().DueAlertDeliveries(clock_.Now(), 10)->empty());
  EXPECT_EQ(store().DueAlertDeliveries(clock_.Now() + seconds(10), 10)->size(), 1u);
  ASSERT_TRUE(
      store().SetAlertDelivery(*id, AlertDelivery::kDelivered, 2, "HTTP 200", std::nullopt).ok());
  EXPECT_TRUE(store().DueAlertDeliveries(clock_.Now() + seconds(3600), 10)->empty());
  Result<std::vector<AlertRow>> listed = store().ListAlerts(0, 10);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->at(0).delivery, AlertDelivery::kDelivered);
  EXPECT_EQ(listed->at(0).attempts, 2);
  EXPECT_EQ(listed->at(0).delivery_detail, "HTTP 200");
  EXPECT_EQ(
      store().SetAlertDelivery(*id + 100, AlertDelivery::kDelivered, 1, "", std::nullopt).code(),
      StatusCode::kNotFound);
}

TEST_P(StoreConformanceTest, TokensBootstrapOnceAndAreFoundByHashOnly) {
  TokenRow root{"root", "admin", "aa11", clock_.Now(), std::nullopt, std::nullopt, "bootstrap"};
  ASSERT_TRUE(store().CreateToken(root, /*only_if_first=*/true).ok());
  TokenRow again{"root2", "admin", "bb22", clock_.Now(), std::nullopt, std::nullopt, ""};
  EXPECT_EQ(store().CreateToken(again, true).code(), StatusCode::kFailedPrecondition);
  TokenRow viewer{"ci",         "viewer", "cc33", clock_.Now(), clock_.Now() + seconds(60),
                  std::nullopt, "root"};
  ASSERT_TRUE(store().CreateToken(viewer, false).ok());
  TokenRow dup = viewer;
  dup.hash = "dd44";
  EXPECT_EQ(store().CreateToken(dup, false).code(), StatusCode::kAlreadyExists);

  Result<TokenRow> found = store().FindToken("cc33");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->name, "ci");
  EXPECT_EQ(found->role, "viewer");
  EXPECT_EQ(found->expires_at, clock_.Now() + seconds(60));
  EXPECT_EQ(store().FindToken("nope").status().code(), StatusCode::kNotFound);

  ASSERT_TRUE(store().RevokeToken("ci", clock_.Now()).ok());
  EXPECT_EQ(store().FindToken("cc33")->revoked_at, clock_.Now());
  EXPECT_EQ(store().RevokeToken("ghost", clock_.Now()).code(), StatusCode::kNotFound);
  Result<std::vector<TokenRow>> all = store().ListTokens();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at(0).name, "ci");
}

TEST_P(StoreConformanceTest, TheAuditTrailIsKeptInOrderAndFilters) {
  for (const char* who : {"alice", "bob", "alice"}) {
    AuditRow a;
    a.who = who;
    a.action = "task.submit";
    a.target = std::string("t-") + who;
    a.args_digest = "0f";
    a.peer = "ipv4:127.0.0.1:5000";
    a.outcome = "ok";
    ASSERT_TRUE(store().AddAudit(a).ok());
    clock_.Advance(seconds(1));
  }
  Result<std::vector<AuditRow>> all = store().ListAudit({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_LT(all->at(0).id, all->at(2).id);
  AuditQuery by;
  by.who = "alice";
  EXPECT_EQ(store().ListAudit(by)->size(), 2u);
  AuditQuery since;
  since.since = all->at(1).at;
  Result<std::vector<AuditRow>> later = store().ListAudit(since);
  ASSERT_EQ(later->size(), 2u);
  EXPECT_EQ(later->at(0).who, "bob");
}

// The submit's audit row rides in the tasks' transaction: both or neither.
TEST_P(StoreConformanceTest, TasksCreatedWithTheirAuditRowExistExactlyWhenItDoes) {
  AuditRow a;
  a.who = "ci";
  a.action = "task.submit";
  a.target = "t1";
  a.args_digest = "0f";
  a.outcome = "ok";
  TaskSpec spec = Spec("t1", {"n1"});
  Result<std::vector<CreatedTask>> made =
      store().CreateTasksAudited(std::vector<NewTask>{{spec, {"n1"}, seconds(0)}}, a);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_EQ(made->size(), 1u);
  EXPECT_TRUE(made->at(0).created);
  Result<std::vector<AuditRow>> rows = store().ListAudit({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->at(0).target, "t1");
  EXPECT_EQ(rows->at(0).who, "ci");
  EXPECT_TRUE(store().GetTask("t1").ok());

  // Same id, another spec: the create fails, and so no audit row is kept.
  TaskSpec other = Spec("t1", {"n1"});
  other.intent = "something_else";
  a.target = "t1-again";
  Result<std::vector<CreatedTask>> clash =
      store().CreateTasksAudited(std::vector<NewTask>{{other, {"n1"}, seconds(0)}}, a);
  EXPECT_EQ(clash.status().code(), StatusCode::kAlreadyExists);
  rows = store().ListAudit({});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 1u);
}

TEST_P(StoreConformanceTest, PurgeTakesWholeSettledTasksInBatchesAndLateEventsStayOut) {
  for (const char* t : {"a", "b", "c"}) DriveTo(t, "n1", TaskState::kSucceeded);
  DriveTo("open", "n1", TaskState::kRunning);
  clock_.Advance(std::chrono::hours(24 * 8));
  RetentionPolicy policy;
  policy.batch = 2;
  Result<PurgeStats> first = store().Purge(policy);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->tasks, 2);
  EXPECT_TRUE(first->more);
  Result<PurgeStats> second = store().Purge(policy);
  EXPECT_EQ(second->tasks, 1);
  EXPECT_FALSE(second->more);
  for (const char* t : {"a", "b", "c"}) {
    EXPECT_EQ(store().GetTask(t).status().code(), StatusCode::kNotFound) << t;
  }
  EXPECT_EQ(Row("open", "n1").state, TaskState::kRunning);

  // A late redelivery of a purged task's event is a duplicate (below the
  // node's mark); one above it names an unknown task; neither brings it back.
  Event late = Ev("a", "n1", EventType::kSucceeded);
  Event old = late;
  old.sequence_number = 1;
  EXPECT_EQ(ApplyOk({old}).outcomes.at(0).outcome, Outcome::kDuplicate);
  EXPECT_EQ(ApplyOk({late}).outcomes.at(0).outcome, Outcome::kUnknownTask);
  EXPECT_EQ(store().GetTask("a").status().code(), StatusCode::kNotFound);
}

// A store remembers the task ref of each task it made or read, to reach
// its events' rows by their whole key (engine/task_ref_hints.h). Here the
// remembered ref goes stale: another replica purges the task and makes its
// id again, after a decoy task that (on SQLite, which gives a freed largest
// ref out again) takes the old ref. Each event must still reach the new
// task and leave the decoy alone.
TEST_P(StoreConformanceTest, AnEventReachesATaskIdMadeAgainElsewhereNotTheRefItOnceHad) {
  DriveTo("again", "n1", TaskState::kSucceeded);  // remembered here
  Result<std::unique_ptr<StateStore>> other = OpenStateStore(url_, options_, clock_);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  clock_.Advance(std::chrono::hours(24 * 8));
  Result<PurgeStats> purged = (*other)->Purge(RetentionPolicy{});
  ASSERT_TRUE(purged.ok()) << purged.status().ToString();
  ASSERT_EQ(purged->tasks, 1);
  for (const char* id : {"decoy", "again"}) {
    std::vector<NewTask> made = {{Spec(id, {"n1"}), {"n1"}}};
    ASSERT_TRUE((*other)->CreateTasks(made).ok()) << id;
    TransitionRequest r = Req(id, "n1", TaskState::kDispatched, Cause::kDispatch);
    r.ack_deadline = clock_.Now() + std::chrono::seconds(10);
    Result<std::vector<EventOutcome>> moved = (*other)->Transition({&r, 1});
    ASSERT_TRUE(moved.ok() && moved->at(0).outcome == Outcome::kApplied) << id;
  }

  for (EventType type : {EventType::kAccepted, EventType::kSucceeded}) {
    ApplyResult r = ApplyOk({Ev("again", "n1", type)});
    ASSERT_EQ(r.outcomes.size(), 1u);
    EXPECT_EQ(r.outcomes[0].outcome, Outcome::kApplied) << r.outcomes[0].reason;
  }
  EXPECT_EQ(Row("again", "n1").state, TaskState::kSucceeded);
  EXPECT_EQ(Row("decoy", "n1").state, TaskState::kDispatched);
}

}  // namespace
}  // namespace apollo::store::testing
