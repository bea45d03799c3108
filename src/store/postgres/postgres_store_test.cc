// PostgreSQL-only behaviour: the schema file, a server that goes away and
// comes back, and several stores (orchestrator replicas) writing at once.
#include <gmock/gmock.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "store/engine/apply_op.h"
#include "store/open_store.h"
#include "store/postgres/pg_driver.h"
#include "store/testing/pg_server.h"

namespace apollo::store::postgres {
namespace {

using ::testing::HasSubstr;
using testing::PgServer;

TaskSpec Spec(const std::string& id, const std::string& node) {
  TaskSpec s;
  s.task_id = id;
  s.intent = "collect_metrics";
  s.target_selector.type = SelectorType::kNodes;
  s.target_selector.nodes = {node};
  s.timeout = std::chrono::seconds(60);
  s.retry_policy.max_retries = 2;
  return s;
}

Event Ev(const std::string& task, const std::string& node, uint64_t seq, EventType type) {
  Event e;
  e.task_id = task;
  e.node_id = node;
  e.sequence_number = seq;
  e.attempt = 1;
  e.type = type;
  return e;
}

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<PgServer>> s = PgServer::Start();
    ASSERT_TRUE(s.ok()) << s.status().ToString();  // fail, never skip
    server_ = std::move(*s);
    Result<std::string> url = server_->NewDatabase();
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    url_ = *url;
  }
  std::unique_ptr<StateStore> Open(const StoreOptions& options = {}) {
    Result<std::unique_ptr<StateStore>> s = OpenStateStore(url_, options, clock_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  void CreateAndDispatch(StateStore& store, int n, const std::string& node) {
    std::vector<NewTask> tasks;
    std::vector<TransitionRequest> reqs;
    for (int i = 0; i < n; ++i) {
      std::string id = "t" + std::to_string(i);
      tasks.push_back({Spec(id, node), {node}});
      TransitionRequest r;
      r.task_id = id;
      r.node_id = node;
      r.to = TaskState::kDispatched;
      reqs.push_back(r);
    }
    ASSERT_TRUE(store.CreateTasks(tasks).ok());
    ASSERT_TRUE(store.Transition(reqs).ok());
  }

  ManualClock clock_;
  std::unique_ptr<PgServer> server_;
  std::string url_;
};

TEST_F(PostgresStoreTest, PsqlSchemaTwiceThenTheStoreOpensOnIt) {
  std::string cmd = "psql '" + url_ + "' -q -v ON_ERROR_STOP=1 -f " +
                    std::string(APOLLO_SOURCE_DIR) + "/schema.sql > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "second run: " << cmd;
  std::unique_ptr<StateStore> store = Open();
  ASSERT_NE(store, nullptr);
  CreateAndDispatch(*store, 1, "n1");
  store = Open();  // migrating an up-to-date database is a no-op
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetTask("t0")->nodes.at(0).state, TaskState::kDispatched);
}

TEST_F(PostgresStoreTest, ServerStoppedMidRunIsUnavailableThenRecoversOnTheSameStore) {
  std::unique_ptr<StateStore> store = Open();
  ASSERT_NE(store, nullptr);
  CreateAndDispatch(*store, 2, "n1");
  ASSERT_TRUE(store->GetTask("t0").ok());  // a reader connection is pooled

  ASSERT_TRUE(server_->Stop().ok());
  Result<ApplyResult> applied = store->Apply({Ev("t0", "n1", 1, EventType::kAccepted)});
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(applied.status().message(), HasSubstr("PostgreSQL"));
  Result<TaskRow> read = store->GetTask("t0");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(store->UpsertNode({"n1", {}, {}, {}, "normal", "1", std::nullopt, true, {}}).code(),
            StatusCode::kUnavailable);

  ASSERT_TRUE(server_->Restart().ok());
  applied = store->Apply({Ev("t0", "n1", 1, EventType::kAccepted)});
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(applied->outcomes.at(0).outcome, Outcome::kApplied);
  read = store->GetTask("t0");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->nodes.at(0).state, TaskState::kRunning);
  EXPECT_EQ(*store->HighestStoredSeq("n1"), 1u);
}

// PostgreSQL's UTF8 text refuses bytes SQLite stores as given: they are
// replaced, and neither the batch nor the call fails.
TEST_F(PostgresStoreTest, InvalidUtf8FromAgentsIsStoredNotFatal) {
  std::unique_ptr<StateStore> store = Open();
  ASSERT_NE(store, nullptr);
  CreateAndDispatch(*store, 1, "n1");
  Event odd = Ev("t0", "n1", 1, EventType::kAccepted);
  odd.payload = "{\"note\":\"\xff\xfe\"}";
  Event unknown = Ev(std::string("t\xc3") + '\0' + "x", "n1", 2, EventType::kAccepted);
  Result<ApplyResult> r = store->Apply({odd, unknown, Ev("t0", "n1", 3, EventType::kProgress)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outcomes.size(), 3u);
  EXPECT_EQ(r->outcomes[0].outcome, Outcome::kMalformed);  // not valid JSON text
  EXPECT_EQ(r->outcomes[1].outcome, Outcome::kUnknownTask);
  EXPECT_EQ(r->outcomes[2].outcome, Outcome::kApplied);
  EXPECT_EQ(r->acked_seq["n1"], 3u);
  DeadLetter letter;
  letter.event = unknown;
  letter.reason = "bad bytes \xff";
  Result<int64_t> id = store->AddDeadLetter(letter);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_TRUE(store->GetDeadLetter(*id).ok());
  EXPECT_EQ(store->ListAlerts(0, 10)->size(), 2u);
}

TEST_F(PostgresStoreTest, OpenFailsUnavailableWhenTheServerIsDown) {
  ASSERT_TRUE(server_->Stop().ok());
  Result<std::unique_ptr<StateStore>> s = OpenStateStore(url_, {}, clock_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
}

// Two replicas race compare-and-set dispatches of the same rows: each row is
// dispatched exactly once.
TEST_F(PostgresStoreTest, TwoStoresRacingCasDispatchLoseNoUpdate) {
  constexpr int kTasks = 200;
  std::unique_ptr<StateStore> a = Open(), b = Open();
  ASSERT_TRUE(a && b);
  std::vector<NewTask> tasks;
  for (int i = 0; i < kTasks; ++i) tasks.push_back({Spec("t" + std::to_string(i), "n1"), {"n1"}});
  ASSERT_TRUE(a->CreateTasks(tasks).ok());
  std::atomic<int> applied{0}, conflicts{0};
  auto race = [&](StateStore& s, bool reverse) {
    for (int k = 0; k < kTasks; ++k) {
      int i = reverse ? kTasks - 1 - k : k;
      TransitionRequest r;
      r.task_id = "t" + std::to_string(i);
      r.node_id = "n1";
      r.to = TaskState::kDispatched;
      r.expected_version = 1;
      Result<std::vector<EventOutcome>> o = s.Transition({&r, 1});
      ASSERT_TRUE(o.ok()) << o.status().ToString();
      Outcome out = o->at(0).outcome;
      if (out == Outcome::kApplied) ++applied;
      if (out == Outcome::kVersionConflict) ++conflicts;
    }
  };
  std::thread ta([&] { race(*a, false); }), tb([&] { race(*b, true); });
  ta.join();
  tb.join();
  EXPECT_EQ(applied.load(), kTasks);
  EXPECT_EQ(conflicts.load(), kTasks);
  for (int i = 0; i < kTasks; ++i) {
    std::string id = "t" + std::to_string(i);
    EXPECT_EQ(a->GetTask(id)->nodes.at(0).version, 2) << id;
    EXPECT_EQ(a->GetHistory(id)->size(), 2u) << id;  // create + one dispatch
  }
}

// Replica A applies the agents' events while replica B cancels the same rows
// and both replay the same event stream: every event counts once, and each
// row's history is one unbroken chain of versions.
TEST_F(PostgresStoreTest, ConcurrentEventsAndCancelsKeepEveryHistoryConsistent) {
  constexpr int kTasks = 150;
  std::unique_ptr<StateStore> a = Open(), b = Open();
  ASSERT_TRUE(a && b);
  CreateAndDispatch(*a, kTasks, "n1");
  std::vector<Event> events;
  for (int i = 0; i < kTasks; ++i) {
    events.push_back(Ev("t" + std::to_string(i), "n1", i + 1, EventType::kAccepted));
  }
  auto apply_all = [&](StateStore& s) {
    for (size_t i = 0; i < events.size(); i += 10) {
      std::vector<Event> chunk(events.begin() + i,
                               events.begin() + std::min(events.size(), i + 10));
      Result<ApplyResult> r = s.Apply(chunk);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  };
  std::thread ta([&] { apply_all(*a); });
  std::thread tb([&] {
    for (int i = kTasks - 1; i >= 0; --i) {
      TransitionRequest r;
      r.task_id = "t" + std::to_string(i);
      r.node_id = "n1";
      r.to = TaskState::kCancelled;
      r.cause = Cause::kCancel;
      ASSERT_TRUE(b->Transition({&r, 1}).ok());
    }
  });
  std::thread tc([&] { apply_all(*b); });  // the same events via another replica
  ta.join();
  tb.join();
  tc.join();
  StoreStats sa = a->Stats(), sb = b->Stats();
  EXPECT_EQ(sa.events_applied + sb.events_applied + sa.illegal_transitions + sb.illegal_transitions,
            kTasks);
  EXPECT_EQ(sa.events_duplicate + sb.events_duplicate, kTasks);
  EXPECT_EQ(*a->HighestStoredSeq("n1"), static_cast<uint64_t>(kTasks));
  for (int i = 0; i < kTasks; ++i) {
    std::string id = "t" + std::to_string(i);
    Result<std::vector<HistoryRow>> h = a->GetHistory(id);
    ASSERT_TRUE(h.ok());
    int64_t version = 1;
    TaskState state = TaskState::kPending;
    for (const HistoryRow& row : *h) {
      if (row.cause == Cause::kCreate || row.outcome != Outcome::kApplied) continue;
      EXPECT_EQ(row.from, state) << id;
      EXPECT_EQ(row.version, ++version) << id;
      state = row.to;
    }
    NodeRow now = a->GetTask(id)->nodes.at(0);
    EXPECT_EQ(now.state, TaskState::kCancelled) << id;
    EXPECT_EQ(now.version, version) << id;
  }
}

// Node ids that the store's two event writers (the default) split between
// them, by the store's own routing rule.
std::vector<std::string> NodesOnWriter(size_t writer, int n) {
  std::vector<std::string> out;
  for (int i = 0; static_cast<int>(out.size()) < n; ++i) {
    std::string id = "node-" + std::to_string(i);
    if (engine::EventWriterOf(id, 2) == writer) out.push_back(id);
  }
  return out;
}

// A batch with nodes of both event writers is applied as one transaction on
// each; its caller still gets one outcome per event, in the batch's order,
// and every node's mark. With one event writer the same batch is one commit.
TEST_F(PostgresStoreTest, ABatchOverBothEventWritersIsAnsweredInItsOrder) {
  for (int event_writers : {2, 1}) {
    SCOPED_TRACE(event_writers);
    Result<std::string> db = server_->NewDatabase();  // a database of its own
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    url_ = *db;
    StoreOptions options;
    options.event_writers = event_writers;
    std::unique_ptr<StateStore> store = Open(options);
    ASSERT_TRUE(store);
    std::vector<std::string> nodes = NodesOnWriter(0, 3);
    for (const std::string& id : NodesOnWriter(1, 3)) nodes.push_back(id);
    std::vector<NewTask> tasks;
    std::vector<TransitionRequest> dispatch;
    for (const std::string& node : nodes) {
      tasks.push_back({Spec("t-" + node, node), {node}});
      TransitionRequest r;
      r.task_id = "t-" + node;
      r.node_id = node;
      r.to = TaskState::kDispatched;
      dispatch.push_back(r);
    }
    ASSERT_TRUE(store->CreateTasks(tasks).ok());
    ASSERT_TRUE(store->Transition(dispatch).ok());
    // ACCEPTED on every node, one event for no task, then SUCCEEDED on
    // every node in the other order: the writers' parts interleave.
    std::vector<Event> batch;
    for (const std::string& node : nodes) {
      batch.push_back(Ev("t-" + node, node, 1, EventType::kAccepted));
    }
    batch.push_back(Ev("ghost", nodes[1], 2, EventType::kAccepted));
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      batch.push_back(Ev("t-" + *it, *it, *it == nodes[1] ? 3 : 2, EventType::kSucceeded));
    }
    int64_t commits = store->Stats().commits;
    Result<ApplyResult> r = store->Apply(batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(store->Stats().commits - commits, event_writers);
    ASSERT_EQ(r->outcomes.size(), batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      const EventOutcome& o = r->outcomes[i];
      if (batch[i].task_id == "ghost") {
        EXPECT_EQ(o.outcome, Outcome::kUnknownTask) << i;
        continue;
      }
      EXPECT_EQ(o.outcome, Outcome::kApplied) << i << ": " << o.reason;
      EXPECT_EQ(o.to,
                batch[i].type == EventType::kAccepted ? TaskState::kRunning : TaskState::kSucceeded)
          << i;
    }
    ASSERT_EQ(r->acked_seq.size(), nodes.size());
    for (const std::string& node : nodes) {
      EXPECT_EQ(r->acked_seq.at(node), node == nodes[1] ? 3u : 2u) << node;
      EXPECT_EQ(store->GetTask("t-" + node)->status, TaskState::kSucceeded) << node;
    }
  }
}

// One task on two nodes of different event writers, its events applied by
// two callers at once, a task per round: the writers meet on the task's
// roll-up row, and each task still settles SUCCEEDED with both rows'
// histories unbroken.
TEST_F(PostgresStoreTest, TwoEventWritersOnOneTaskKeepItsRollUp) {
  constexpr int kTasks = 200;
  std::unique_ptr<StateStore> store = Open();
  ASSERT_TRUE(store);
  const std::string a = NodesOnWriter(0, 1)[0], b = NodesOnWriter(1, 1)[0];
  std::vector<NewTask> tasks;
  std::vector<TransitionRequest> dispatch;
  for (int i = 0; i < kTasks; ++i) {
    TaskSpec spec = Spec("t" + std::to_string(i), a);
    spec.target_selector.nodes = {a, b};
    tasks.push_back({spec, {a, b}});
    for (const std::string& node : {a, b}) {
      TransitionRequest r;
      r.task_id = spec.task_id;
      r.node_id = node;
      r.to = TaskState::kDispatched;
      dispatch.push_back(r);
    }
  }
  ASSERT_TRUE(store->CreateTasks(tasks).ok());
  ASSERT_TRUE(store->Transition(dispatch).ok());
  auto agent = [&](const std::string& node) {
    uint64_t seq = 0;
    for (int i = 0; i < kTasks; ++i) {
      std::string id = "t" + std::to_string(i);
      Result<ApplyResult> r = store->Apply(
          {Ev(id, node, ++seq, EventType::kAccepted), Ev(id, node, ++seq, EventType::kSucceeded)});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      for (const EventOutcome& o : r->outcomes) {
        ASSERT_EQ(o.outcome, Outcome::kApplied) << id << " " << node << ": " << o.reason;
      }
    }
  };
  std::thread ta([&] { agent(a); });
  std::thread tb([&] { agent(b); });
  ta.join();
  tb.join();
  EXPECT_EQ(*store->HighestStoredSeq(a), 2u * kTasks);
  EXPECT_EQ(*store->HighestStoredSeq(b), 2u * kTasks);
  for (int i = 0; i < kTasks; ++i) {
    std::string id = "t" + std::to_string(i);
    Result<TaskRow> task = store->GetTask(id);
    ASSERT_TRUE(task.ok());
    EXPECT_EQ(task->status, TaskState::kSucceeded) << id;
    Result<std::vector<HistoryRow>> h = store->GetHistory(id);
    ASSERT_TRUE(h.ok());
    std::map<std::string, int64_t> version;
    for (const HistoryRow& row : *h) {
      if (row.cause == Cause::kCreate || row.outcome != Outcome::kApplied) continue;
      EXPECT_EQ(row.version, ++version[row.node_id] + 1) << id << " " << row.node_id;
    }
    for (const NodeRow& row : task->nodes) {  // the chain ends at the row
      EXPECT_EQ(row.state, TaskState::kSucceeded) << id << " " << row.node_id;
      EXPECT_EQ(version[row.node_id] + 1, row.version) << id << " " << row.node_id;
    }
  }
}

// A keyed statement over an unnest()ed array, like every writer statement,
// prepared on a connection of each role; run past PostgreSQL's five custom
// plans, then asked how it was planned.
constexpr char kPrepareProbe[] =
    "PREPARE probe(text[]) AS SELECT t.task_ref FROM tasks t, unnest($1::text[]) AS u(task_id) "
    "WHERE t.task_id = u.task_id";
constexpr sql::Statement kRunProbe{"EXECUTE probe('{t1}')"};
constexpr sql::Statement kProbePlans{
    "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'probe'"};
constexpr sql::Statement kExplainProbe{"EXPLAIN EXECUTE probe('{t1}')"};

struct ProbePlans {
  int64_t generic = 0;
  int64_t custom = 0;
  std::string plan;
};

ProbePlans Probe(sql::Driver& driver, sql::Role role) {
  ProbePlans out;
  Result<std::unique_ptr<sql::Conn>> conn = driver.Connect(role);
  EXPECT_TRUE(conn.ok()) << conn.status().ToString();
  if (!conn.ok()) return out;
  sql::Conn& c = **conn;
  Status st = c.Script(kPrepareProbe);
  EXPECT_TRUE(st.ok()) << st.ToString();
  for (int i = 0; i < 8; ++i) {
    Result<sql::Rows> r = c.Query(kRunProbe);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) {
      EXPECT_EQ(r->size(), 1u);
    }
  }
  Result<sql::Rows> plans = c.Query(kProbePlans);
  EXPECT_TRUE(plans.ok() && plans->size() == 1) << plans.status().ToString();
  if (plans.ok() && plans->size() == 1) {
    out.generic = plans->Int(0, 0);
    out.custom = plans->Int(0, 1);
  }
  Result<sql::Rows> explain = c.Query(kExplainProbe);
  EXPECT_TRUE(explain.ok()) << explain.status().ToString();
  for (size_t i = 0; explain.ok() && i < explain->size(); ++i) {
    out.plan += explain->TakeText(i, 0) + "\n";
  }
  return out;
}

// The writer plans its keyed statements once, not on every execution, and
// that plan looks rows up by index even while the tables are young (a plan
// kept from then must not scan them once they hold millions of rows).
// The readers keep PostgreSQL's defaults.
TEST_F(PostgresStoreTest, TheWriterPlansKeyedStatementsOnceAndByIndex) {
  {
    std::unique_ptr<StateStore> store = Open();
    ASSERT_NE(store, nullptr);
    CreateAndDispatch(*store, 3, "n1");  // three rows: a scan looks cheapest
  }
  std::unique_ptr<sql::Driver> driver = NewPostgresDriver(url_);
  ProbePlans writer = Probe(*driver, sql::Role::kWriter);
  EXPECT_EQ(writer.custom, 0) << "the writer planned the statement afresh";
  EXPECT_GE(writer.generic, 1);
  EXPECT_THAT(writer.plan, HasSubstr("Index Scan"));
  EXPECT_THAT(writer.plan, ::testing::Not(HasSubstr("Seq Scan"))) << writer.plan;
  ProbePlans reader = Probe(*driver, sql::Role::kReader);
  EXPECT_GE(reader.custom, 5) << "a reader's session should keep the defaults";
}

}  // namespace
}  // namespace apollo::store::postgres
