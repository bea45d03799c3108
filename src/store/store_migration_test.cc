// Conformance, part 4: a store written by schema 1 (before the one engine:
// each backend had its own layout) opens, migrates and reads back what it
// held, then takes new writes without reusing an id. The fixture's story:
// src/store/testdata/make_v1_fixture.cc.txt.
#include <gmock/gmock.h>

#include <filesystem>

#include "store/testing/store_fixture.h"

namespace apollo::store::testing {
namespace {

using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;

TEST_P(StoreConformanceTest, MigratesASchema1StoreAndKeepsEverything) {
  std::string v1_dir = dir_ + "/v1";
  std::filesystem::create_directory(v1_dir);
  Result<std::string> url = GetParam()->NewStoreUrl(v1_dir);
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  ASSERT_TRUE(GetParam()->LoadV1Fixture(*url).ok());
  url_ = *url;
  Reopen();  // migrates

  Result<TaskRow> a = store().GetTask("a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->status, TaskState::kSucceeded);
  EXPECT_EQ(a->spec.metadata.at("ticket"), "CHG-1");
  ASSERT_EQ(a->nodes.size(), 1u);
  EXPECT_EQ(a->nodes[0].result.size(), 3010u);  // {"out":"xxx..."}, stored apart
  EXPECT_TRUE(a->nodes[0].result_ref.has_value());
  Result<std::vector<HistoryRow>> ha = store().GetHistory("a");
  ASSERT_TRUE(ha.ok());
  ASSERT_EQ(ha->size(), 4u);  // create, dispatch, ACCEPTED, SUCCEEDED
  EXPECT_EQ(ha->back().to, TaskState::kSucceeded);
  EXPECT_EQ(ha->back().payload.size(), 3010u);
  int64_t last_old_id = 0;
  for (const HistoryRow& h : *ha) last_old_id = std::max(last_old_id, h.id);

  Result<TaskRow> b = store().GetTask("b");  // released when a succeeded
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->nodes.size(), 2u);
  EXPECT_EQ(b->nodes[0].due_kind, DueKind::kDispatch);
  EXPECT_EQ(store().GetTask("c")->nodes.at(0).blocked_reason, "node_not_registered");
  Result<TaskRow> d = store().GetTask("d");
  EXPECT_EQ(d->status, TaskState::kFailed);
  EXPECT_EQ(d->nodes.at(0).last_error, "disk full");

  // f waits for c: when c succeeds, f is released (so c's dependents came
  // through the migration).
  EXPECT_THAT(Row("f", "n1").blocked_reason, HasSubstr("deps_pending [c]"));
  Move("c", "n3", TaskState::kDispatched, Cause::kDispatch);
  ApplyOk({Ev("c", "n3", EventType::kAccepted), Ev("c", "n3", EventType::kSucceeded)});
  EXPECT_EQ(Row("f", "n1").due_kind, DueKind::kDispatch);

  // n2 stored 1, 2, then 5 and 6 above a gap: 3 and 4 close it.
  EXPECT_EQ(*store().HighestStoredSeq("n2"), 2u);
  Event late = Ev("d", "n2", EventType::kProgress);
  late.sequence_number = 5;
  EXPECT_EQ(ApplyOk({late}).outcomes.at(0).outcome, Outcome::kDuplicate);
  std::vector<Event> gap;
  for (uint64_t s : {3u, 4u}) {
    Event e = Ev("d", "n2", EventType::kProgress);
    e.sequence_number = s;
    gap.push_back(e);
  }
  ApplyResult closed = ApplyOk(gap);
  EXPECT_EQ(closed.acked_seq.at("n2"), 6u);

  Result<std::vector<AlertRow>> alerts = store().ListAlerts(0, 100);
  ASSERT_TRUE(alerts.ok());
  EXPECT_THAT(*alerts, Contains(Field(&AlertRow::kind, "unknown_task")));
  EXPECT_THAT(*alerts, Contains(Field(&AlertRow::kind, "circuit_open")));
  Result<std::vector<DeadLetter>> letters = store().ListDeadLetters(0, 10);
  ASSERT_TRUE(letters.ok());
  ASSERT_EQ(letters->size(), 1u);
  EXPECT_EQ(letters->at(0).reason, "poison");
  Result<std::vector<NodeInfo>> nodes = store().ListNodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ(nodes->at(0).labels.at("role"), "web");
  EXPECT_FALSE(nodes->at(2).registered);  // n3, named by a task only

  // New writes continue the old ids.
  Create({Spec("e", {"n1"})}, {"n1"});
  Result<std::vector<HistoryRow>> he = store().GetHistory("e");
  ASSERT_TRUE(he.ok());
  ASSERT_EQ(he->size(), 1u);
  EXPECT_GT(he->at(0).id, last_old_id);
  Reopen();  // a migrated store opens as it is
  EXPECT_EQ(store().GetTask("e")->nodes.size(), 1u);
}

}  // namespace
}  // namespace apollo::store::testing
