// The ListAlerts RPC handler (alert_api.cc) over a real SQLite store:
// paging, the kind / node filters across the store's pages, and the fields.
#include <gtest/gtest.h>

#include "orchestrator/api_service.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

class AlertApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.status().ok()) << temp_.status().ToString();
    orch_ = std::make_unique<Orchestrator>(OrchestratorOptions{}, *store_, clock_);
    api_ = std::make_unique<ApiService>(*store_, *orch_, clock_, access_);
  }
  void TearDown() override {
    api_.reset();
    orch_.reset();
  }
  void Add(const std::string& kind, const std::string& node, const std::string& task,
           const std::string& detail) {
    store::AlertRow a;
    a.kind = kind;
    a.node_id = node;
    a.task_id = task;
    a.detail = detail;
    ASSERT_TRUE(store_->AddAlert(a).ok());
  }
  apollo::v1::ListAlertsResponse List(int64_t after, int limit, const std::string& kind = "",
                                      const std::string& node = "") {
    apollo::v1::ListAlertsRequest req;
    req.set_after_id(after);
    req.set_limit(limit);
    req.set_kind(kind);
    req.set_node_id(node);
    apollo::v1::ListAlertsResponse resp;
    grpc::ServerContext ctx;
    grpc::Status s = api_->ListAlerts(&ctx, &req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  ManualClock clock_;
  testing::TempStore temp_{clock_};  // 1,500 single-alert commits: NORMAL sync
  store::StateStore* store_ = temp_.store();
  AccessControl access_{*store_, clock_, /*enabled=*/false};
  std::unique_ptr<Orchestrator> orch_;
  std::unique_ptr<ApiService> api_;
};

TEST_F(AlertApiTest, PagesOldestFirstWithFields) {
  Add("queue_alert", "", "", "dispatch queue above its alert mark");
  store::AlertRow t;
  t.kind = "illegal_transition";
  t.node_id = "n1";
  t.task_id = "t1";
  t.from = TaskState::kSucceeded;
  t.to = TaskState::kRunning;
  t.event_id = "n1-7";
  t.detail = "SUCCEEDED is final";
  ASSERT_TRUE(store_->AddAlert(t).ok());
  Add("queue_resumed", "", "", "back below");

  auto first = List(0, 2);
  ASSERT_EQ(first.alerts_size(), 2);
  EXPECT_TRUE(first.more());
  EXPECT_EQ(first.alerts(0).kind(), "queue_alert");
  const auto& a = first.alerts(1);
  EXPECT_EQ(a.kind(), "illegal_transition");
  EXPECT_EQ(a.node_id(), "n1");
  EXPECT_EQ(a.task_id(), "t1");
  EXPECT_EQ(a.from_status(), "SUCCEEDED");
  EXPECT_EQ(a.to_status(), "RUNNING");
  EXPECT_EQ(a.event_id(), "n1-7");
  EXPECT_EQ(a.message(), "SUCCEEDED is final");
  EXPECT_EQ(a.at_us(), ToUnixMicros(clock_.Now()));
  EXPECT_EQ(first.next_after_id(), a.id());
  auto rest = List(first.next_after_id(), 2);
  ASSERT_EQ(rest.alerts_size(), 1);
  EXPECT_EQ(rest.alerts(0).kind(), "queue_resumed");
  EXPECT_FALSE(rest.more());
  EXPECT_EQ(List(0, 0).alerts_size(), 3);  // 0: the server's default
}

TEST_F(AlertApiTest, FiltersReachPastTheStoresFirstPage) {
  // 1,500 alerts of other kinds first, then the ones asked for: the filter
  // must page through the store, not look at its first page only.
  for (int i = 0; i < 1500; ++i) Add("unknown_task", "n2", "x" + std::to_string(i), "noise");
  Add("circuit_open", "n1", "doomed-1", "intent exec: 5 failures");
  Add("circuit_open", "n2", "doomed-2", "intent exec: 5 failures");
  Add("circuit_open", "n1", "doomed-3", "intent exec: 5 failures");

  auto open = List(0, 100, "circuit_open");
  ASSERT_EQ(open.alerts_size(), 3);
  EXPECT_FALSE(open.more());
  auto n1 = List(0, 100, "circuit_open", "n1");
  ASSERT_EQ(n1.alerts_size(), 2);
  EXPECT_EQ(n1.alerts(0).task_id(), "doomed-1");
  EXPECT_EQ(n1.alerts(1).task_id(), "doomed-3");
  // Limited: one shown, more said, and the next page goes on from it.
  auto one = List(0, 1, "circuit_open", "n1");
  ASSERT_EQ(one.alerts_size(), 1);
  EXPECT_TRUE(one.more());
  auto next = List(one.next_after_id(), 1, "circuit_open", "n1");
  ASSERT_EQ(next.alerts_size(), 1);
  EXPECT_EQ(next.alerts(0).task_id(), "doomed-3");
  EXPECT_EQ(List(0, 100, "no_such_kind").alerts_size(), 0);
}

}  // namespace
}  // namespace apollo::orchestrator
