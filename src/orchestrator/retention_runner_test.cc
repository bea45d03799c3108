// The retention runner over a real SQLite store: a round goes on in
// batch-sized calls until nothing older than a horizon is left, keeps what
// is younger, and counts what it purged.
#include "orchestrator/retention_runner.h"

#include <gtest/gtest.h>

#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

class RetentionRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(temp_.status().ok()) << temp_.status().ToString(); }
  void AddAlerts(int n) {
    for (int i = 0; i < n; ++i) {
      store::AlertRow a;
      a.kind = "queue_alert";
      a.detail = "alert " + std::to_string(i);
      ASSERT_TRUE(store_->AddAlert(a).ok());
    }
  }
  size_t Alerts() {
    auto rows = store_->ListAlerts(0, 1000);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? rows->size() : 0;
  }

  ManualClock clock_;
  testing::TempStore temp_{clock_};
  store::StateStore* store_ = temp_.store();
};

TEST_F(RetentionRunnerTest, ARoundPurgesInBatchesOnlyWhatIsOld) {
  AddAlerts(5);
  clock_.Advance(std::chrono::hours(2));
  AddAlerts(2);  // young: kept
  RetentionRunnerOptions o;
  o.policy.alert_horizon = std::chrono::hours(1);
  o.policy.batch = 2;
  o.pause = std::chrono::milliseconds(1);
  RetentionRunner runner(o, *store_);
  auto round = runner.RunRound();
  ASSERT_TRUE(round.ok()) << round.status().ToString();
  EXPECT_EQ(round->alert_rows, 5);
  EXPECT_FALSE(round->more);
  EXPECT_EQ(Alerts(), 2u);
  EXPECT_EQ(runner.Totals().alert_rows, 5);
  EXPECT_EQ(DescribePurge(*round), "5 alerts");
  round = runner.RunRound();
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(DescribePurge(*round), "nothing");
}

TEST_F(RetentionRunnerTest, ARoundStopsAtItsCallLimitAndTheNextGoesOn) {
  AddAlerts(7);
  clock_.Advance(std::chrono::hours(2));
  RetentionRunnerOptions o;
  o.policy.alert_horizon = std::chrono::hours(1);
  o.policy.batch = 2;
  o.pause = std::chrono::milliseconds(1);
  o.max_calls_per_round = 2;
  RetentionRunner runner(o, *store_);
  auto round = runner.RunRound();
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(round->alert_rows, 4);
  EXPECT_TRUE(round->more);
  EXPECT_EQ(Alerts(), 3u);
  round = runner.RunRound();
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(Alerts(), 0u);
  EXPECT_EQ(runner.Totals().alert_rows, 7);
}

TEST_F(RetentionRunnerTest, TheThreadRunsRoundsOnItsOwn) {
  AddAlerts(3);
  clock_.Advance(std::chrono::hours(2));
  RetentionRunnerOptions o;
  o.policy.alert_horizon = std::chrono::hours(1);
  o.interval = std::chrono::milliseconds(10);
  std::vector<std::string> lines;
  std::mutex mu;
  o.log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  };
  RetentionRunner runner(o, *store_);
  runner.Start();
  for (int i = 0; i < 500 && runner.Totals().alert_rows < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  runner.Stop();
  EXPECT_EQ(runner.Totals().alert_rows, 3);
  EXPECT_EQ(Alerts(), 0u);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "retention: purged 3 alerts");
}

}  // namespace
}  // namespace apollo::orchestrator
