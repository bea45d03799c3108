// Alert delivery over a real SQLite store and a scripted HTTP seam: each
// alert is posted once, failures are retried on the backoff and give up
// after max_attempts, and every outcome is kept on the alert's row.
#include "orchestrator/alert_notifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <nlohmann/json.hpp>

#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ScriptedPoster final : public HttpPoster {
 public:
  Status Post(const std::string& url, const std::string& json, Duration,
              const std::vector<std::string>& headers, const std::string&) override {
    posts.push_back({url, json, headers});
    if (answers.empty()) return Status::Ok();
    Status s = answers.front();
    answers.pop_front();
    return s;
  }
  struct Sent {
    std::string url, json;
    std::vector<std::string> headers;
  };
  std::vector<Sent> posts;
  std::deque<Status> answers;  // then OK
};

class AlertNotifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.status().ok()) << temp_.status().ToString();
    options_.webhook_url = "http://127.0.0.1:9/hook";
    options_.headers = {"X-Team: ops"};
    options_.max_attempts = 3;
  }
  int64_t Add(const std::string& kind) {
    store::AlertRow a;
    a.kind = kind;
    a.node_id = "n1";
    a.task_id = "t1";
    a.detail = "what happened";
    auto id = store_->AddAlert(a);
    EXPECT_TRUE(id.ok());
    return id.ok() ? *id : 0;
  }
  store::AlertRow Row(int64_t id) {
    auto rows = store_->ListAlerts(0, 100);
    EXPECT_TRUE(rows.ok());
    for (const auto& a : *rows) {
      if (a.id == id) return a;
    }
    ADD_FAILURE() << "no alert " << id;
    return {};
  }

  ManualClock clock_;
  testing::TempStore temp_{clock_};
  store::StateStore* store_ = temp_.store();
  AlertNotifierOptions options_;
  ScriptedPoster poster_;
};

TEST_F(AlertNotifierTest, EachAlertIsPostedOnceWithItsFieldsAndHeaders) {
  int64_t a = Add("dead_letter");
  int64_t b = Add("circuit_open");
  AlertNotifier n(options_, *store_, poster_, clock_);
  ASSERT_TRUE(n.DeliverDue());
  ASSERT_EQ(poster_.posts.size(), 2u);
  auto body = nlohmann::json::parse(poster_.posts[0].json);
  EXPECT_EQ(body["id"], a);
  EXPECT_EQ(body["kind"], "dead_letter");
  EXPECT_EQ(body["node_id"], "n1");
  EXPECT_EQ(body["task_id"], "t1");
  EXPECT_EQ(body["detail"], "what happened");
  EXPECT_TRUE(body.contains("at"));
  EXPECT_EQ(poster_.posts[0].url, "http://127.0.0.1:9/hook");
  EXPECT_THAT(poster_.posts[0].headers, ElementsAre("X-Team: ops"));
  EXPECT_EQ(Row(a).delivery, store::AlertDelivery::kDelivered);
  EXPECT_EQ(Row(b).delivery, store::AlertDelivery::kDelivered);
  EXPECT_EQ(Row(b).attempts, 1);
  ASSERT_TRUE(n.DeliverDue());
  EXPECT_EQ(poster_.posts.size(), 2u) << "a delivered alert is never sent again";
}

TEST_F(AlertNotifierTest, AFailureIsRetriedOnTheBackoffThenDelivered) {
  int64_t a = Add("queue_alert");
  poster_.answers = {Status::Unavailable("HTTP 503")};
  AlertNotifier n(options_, *store_, poster_, clock_);
  ASSERT_TRUE(n.DeliverDue());
  store::AlertRow row = Row(a);
  EXPECT_EQ(row.delivery, store::AlertDelivery::kFailing);
  EXPECT_EQ(row.attempts, 1);
  EXPECT_EQ(row.delivery_detail, "HTTP 503");
  ASSERT_TRUE(n.DeliverDue());
  EXPECT_EQ(poster_.posts.size(), 1u) << "not due before its backoff";
  clock_.Advance(options_.initial_backoff);
  ASSERT_TRUE(n.DeliverDue());
  EXPECT_EQ(poster_.posts.size(), 2u);
  EXPECT_EQ(Row(a).delivery, store::AlertDelivery::kDelivered);
  EXPECT_EQ(Row(a).attempts, 2);
}

TEST_F(AlertNotifierTest, GivesUpAfterMaxAttempts) {
  int64_t a = Add("dead_letter");
  poster_.answers = {Status::Unavailable("connection refused"),
                     Status::FailedPrecondition("HTTP 404"), Status::Unavailable("timeout")};
  AlertNotifier n(options_, *store_, poster_, clock_);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(n.DeliverDue());
    clock_.Advance(options_.max_backoff);
  }
  EXPECT_EQ(poster_.posts.size(), 3u);
  store::AlertRow row = Row(a);
  EXPECT_EQ(row.delivery, store::AlertDelivery::kGaveUp);
  EXPECT_EQ(row.attempts, 3);
  EXPECT_THAT(row.delivery_detail, HasSubstr("gave up after 3 attempt(s): timeout"));
}

TEST(AlertBackoffTest, DoublesUpToTheCap) {
  AlertNotifierOptions o;
  o.initial_backoff = std::chrono::seconds(1);
  o.max_backoff = std::chrono::seconds(10);
  EXPECT_EQ(AlertNotifier::Backoff(o, 1), std::chrono::seconds(1));
  EXPECT_EQ(AlertNotifier::Backoff(o, 2), std::chrono::seconds(2));
  EXPECT_EQ(AlertNotifier::Backoff(o, 4), std::chrono::seconds(8));
  EXPECT_EQ(AlertNotifier::Backoff(o, 5), std::chrono::seconds(10));
  EXPECT_EQ(AlertNotifier::Backoff(o, 60), std::chrono::seconds(10));
}

}  // namespace
}  // namespace apollo::orchestrator
