// apollo-cli alert list: the views, and the whole command line against the
// fake orchestrator. tests/e2e/overload_test.sh runs it against a real one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/alert_command.h"
#include "cli/testing/cli_fixture.h"

namespace apollo::cli::test_support {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

v1::Alert MakeAlert(int64_t id, const std::string& kind, const std::string& node,
                    const std::string& task, const std::string& message) {
  v1::Alert a;
  a.set_id(id);
  a.set_kind(kind);
  a.set_node_id(node);
  a.set_task_id(task);
  a.set_message(message);
  a.set_at_us(kT0);
  return a;
}

TEST(CliAlertViews, NoneSaysSoAndNamesTheFilter) {
  EXPECT_EQ(AlertsText({}, {}), "no alerts\n");
  AlertOptions o;
  o.kind = "circuit_open";
  EXPECT_EQ(AlertsText({}, o), "no alerts match --kind circuit_open\n");
}

TEST(CliAlertViews, JsonHasNullsForWhatIsAbsent) {
  v1::Alert a = MakeAlert(7, "queue_alert", "", "", "dispatch queue at 85% of 100");
  nlohmann::json j = AlertToJson(a);
  EXPECT_EQ(j["id"], 7);
  EXPECT_EQ(j["at"], "2024-04-05T19:34:38.000000Z");
  EXPECT_EQ(j["kind"], "queue_alert");
  EXPECT_TRUE(j["node_id"].is_null());
  EXPECT_TRUE(j["task_id"].is_null());
  EXPECT_TRUE(j["from"].is_null());
  EXPECT_EQ(j["message"], "dispatch queue at 85% of 100");
}

TEST(CliAlertViews, TransitionAlertsShowTheStatesAndServerTextStaysOnOneLine) {
  v1::ListAlertsResponse resp;
  v1::Alert a = MakeAlert(3, "illegal_transition", "n1", "t1", "SUCCEEDED is final");
  a.set_from_status("SUCCEEDED");
  a.set_to_status("RUNNING");
  *resp.add_alerts() = a;
  *resp.add_alerts() = MakeAlert(4, "unknown_task", "n2", "ghost", "no task ghost\non node n2");
  std::string text = AlertsText(resp, {});
  EXPECT_THAT(text, HasSubstr("SUCCEEDED -> RUNNING: SUCCEEDED is final\n"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
}

TEST_F(CliCommandsTest, AlertListAsksWithTheFiltersAndPrintsTableAndJson) {
  {
    std::lock_guard lock(fake_.mu);
    *fake_.alerts.add_alerts() = MakeAlert(1, "circuit_open", "", "", "intent flaky: 5 failures");
    *fake_.alerts.add_alerts() = MakeAlert(2, "circuit_open", "", "", "intent flaky again");
    fake_.alerts.set_more(true);
    fake_.alerts.set_next_after_id(2);
  }
  CliRun list = Cli({"alert", "list", "--kind", "circuit_open", "--node", "n1", "--limit", "2",
                     "--after", "0"});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_THAT(
      list.out,
      StartsWith("ID  TIME                         KIND          NODE  TASK  DELIVERY  MESSAGE\n"));
  EXPECT_THAT(list.out, HasSubstr("1   2024-04-05T19:34:38.000000Z  circuit_open  -     -     "
                                  "-         intent flaky: 5 failures\n"));
  EXPECT_THAT(list.out, HasSubstr("more alerts: apollo-cli alert list --after 2 --kind "
                                  "circuit_open --node n1 --limit 2\n"));
  {
    std::lock_guard lock(fake_.mu);
    EXPECT_EQ(fake_.last_alert_list.kind(), "circuit_open");
    EXPECT_EQ(fake_.last_alert_list.node_id(), "n1");
    EXPECT_EQ(fake_.last_alert_list.limit(), 2);
    EXPECT_EQ(fake_.last_alert_list.after_id(), 0);
  }
  CliRun json = Cli({"alert", "list", "-o", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["alerts"].size(), 2u);
  EXPECT_EQ(j["alerts"][1]["message"], "intent flaky again");
  EXPECT_EQ(j["more"], true);
  EXPECT_EQ(j["next_after_id"], 2);
}

TEST_F(CliCommandsTest, AlertListBadInputAndDeadServerAreOneLine) {
  CliRun bad = Cli({"alert", "list", "--limit", "-3"});
  EXPECT_NE(bad.code, 0);
  EXPECT_EQ(bad.out, "");
  DeadAddress dead;
  CliRun down = Cli({"alert", "list"}, {}, dead.str());
  ExpectOneErrorLine(down);
}

}  // namespace
}  // namespace apollo::cli::test_support
