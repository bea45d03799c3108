// apollo-cli's event-bus commands (dlq list/show/replay/drop, bus status):
// the views, and the whole command line against the fake orchestrator.
// tests/e2e/dlq_test.sh runs them against a real orchestrator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/bus_command.h"
#include "cli/dlq_command.h"
#include "cli/testing/cli_fixture.h"

namespace apollo::cli::test_support {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

v1::DeadLetter Letter(int64_t id, const std::string& task, const std::string& reason) {
  v1::DeadLetter d;
  d.set_id(id);
  d.set_event_id("n1-" + std::to_string(id + 10));
  d.set_task_id(task);
  d.set_node_id("n1");
  d.set_sequence_number(static_cast<uint64_t>(id + 10));
  d.set_event_type("ACCEPTED");
  d.set_reason(reason);
  d.set_deliveries(5);
  d.set_parked_at_us(kT0);
  d.set_event_json(R"({"event_id":"n1-)" + std::to_string(id + 10) + R"(","payload":{"k":1}})");
  return d;
}

class CliBusTest : public CliCommandsTest {
 protected:
  void AddLetter(const v1::DeadLetter& d) {
    std::lock_guard lock(fake_.mu);
    fake_.letters[d.id()] = d;
  }
};

TEST(CliDlqViews, EmptyQueueSaysSo) {
  EXPECT_EQ(DeadLettersText({}), "no dead letters: every event the bus received was applied\n");
}

TEST(CliDlqViews, JsonShapeParsesTheEvent) {
  v1::DeadLetter d = Letter(3, "ghost", "unknown task ghost");
  nlohmann::json j = DeadLetterToJson(d);
  EXPECT_EQ(j["id"], 3);
  EXPECT_EQ(j["event_id"], "n1-13");
  EXPECT_EQ(j["reason"], "unknown task ghost");
  EXPECT_EQ(j["deliveries"], 5);
  EXPECT_EQ(j["parked_at"], "2024-04-05T19:34:38.000000Z");
  EXPECT_EQ(j["event"]["payload"]["k"], 1);
  d.set_event_json("{not json");
  EXPECT_EQ(DeadLetterToJson(d)["event"], "{not json") << "kept as text, never thrown away";
}

TEST(CliDlqViews, ShowSaysWhatToDoNext) {
  std::string text = DeadLetterText(Letter(3, "ghost", "unknown task ghost\nsecond line"));
  EXPECT_THAT(text, StartsWith("dead letter 3\nevent:      n1-13 (ACCEPTED, seq 13)\n"));
  EXPECT_THAT(text, HasSubstr("reason:     unknown task ghost second line\n"));
  EXPECT_THAT(text, HasSubstr("apollo-cli dlq replay 3"));
  EXPECT_THAT(text, HasSubstr("apollo-cli dlq drop 3"));
}

TEST(CliBusViews, TotalsAndOldestPartition) {
  v1::BusStatusResponse r;
  r.set_backend("embedded");
  r.set_dead_letters(2);
  for (int i = 0; i < 3; ++i) {
    auto* p = r.add_partitions();
    p->set_partition(i);
    p->set_published(10 * (i + 1));
    p->set_applied(10 * (i + 1) - i);
    p->set_pending(static_cast<uint64_t>(i));
    p->set_oldest_unapplied_ms(i * 1500);
  }
  std::string text = BusStatusText(r);
  EXPECT_THAT(text, StartsWith("bus: embedded (3 partitions)\n"
                               "since start: 60 published, 57 applied, 3 pending, oldest "
                               "unapplied 3.0 s (partition 2)\n"
                               "dead letters: 2 waiting for an operator (apollo-cli dlq list)\n"
                               "PARTITION  PUBLISHED  APPLIED  PENDING  DEAD_LETTERED  "
                               "OLDEST_UNAPPLIED\n"
                               "0          10         10       0        0              -\n"));
  nlohmann::json j = BusStatusToJson(r);
  EXPECT_EQ(j["totals"]["pending"], 3);
  EXPECT_EQ(j["totals"]["oldest_unapplied_ms"], 3000);
  EXPECT_EQ(j["partitions"].size(), 3u);
  EXPECT_EQ(j["dead_letters"], 2);
}

TEST_F(CliBusTest, ListShowReplayDropAgainstTheServer) {
  AddLetter(Letter(1, "ghost", "unknown task ghost"));
  AddLetter(Letter(2, "b", "malformed: payload is not JSON"));
  CliRun list = Cli({"dlq", "list"});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_THAT(list.out, StartsWith("ID  EVENT  TASK   NODE  TYPE      DELIVERIES  PARKED_AT"));
  EXPECT_THAT(list.out, HasSubstr("1   n1-11  ghost  n1    ACCEPTED  5           "
                                  "2024-04-05T19:34:38.000000Z  unknown task ghost\n"));
  CliRun json = Cli({"dlq", "list", "-o", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["letters"].size(), 2u);
  EXPECT_EQ(j["letters"][1]["reason"], "malformed: payload is not JSON");
  EXPECT_EQ(j["more"], false);

  CliRun show = Cli({"dlq", "show", "2"});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("reason:     malformed: payload is not JSON\n"));

  {
    std::lock_guard lock(fake_.mu);
    fake_.still_poison[1] = "unknown task ghost";
  }
  CliRun early = Cli({"dlq", "replay", "1"});
  ExpectOneErrorLine(early);
  EXPECT_EQ(early.err, "apollo-cli: dead letter 1 still cannot be applied: unknown task ghost\n");
  EXPECT_EQ(early.code, 1);

  CliRun drop = Cli({"dlq", "drop", "2"});
  ASSERT_EQ(drop.code, 0) << drop.err;
  EXPECT_THAT(drop.out, StartsWith("dead letter 2 dropped"));
  {
    std::lock_guard lock(fake_.mu);
    fake_.still_poison.clear();  // the cause is fixed
  }
  CliRun replay = Cli({"dlq", "replay", "1", "-o", "json"});
  ASSERT_EQ(replay.code, 0) << replay.err;
  EXPECT_EQ(nlohmann::json::parse(replay.out),
            nlohmann::json::parse(R"({"id": 1, "replayed": 1, "remaining": 0})"));
  CliRun empty = Cli({"dlq", "list"});
  EXPECT_EQ(empty.out, "no dead letters: every event the bus received was applied\n");
}

TEST_F(CliBusTest, ReplayAllKeepsThePoisonAndSaysHowManyAreLeft) {
  AddLetter(Letter(1, "a", "unknown task a"));
  AddLetter(Letter(2, "b", "unknown task b"));
  {
    std::lock_guard lock(fake_.mu);
    fake_.still_poison[2] = "unknown task b";
  }
  CliRun r = Cli({"dlq", "replay", "--all"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "replayed 1 dead letter(s); 1 left (still cannot be applied: see apollo-cli dlq "
            "list)\n");
}

TEST_F(CliBusTest, ListPagesWithAfterAndLimit) {
  for (int64_t id = 1; id <= 3; ++id) AddLetter(Letter(id, "t", "r"));
  CliRun r = Cli({"dlq", "list", "--after", "1", "--limit", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n2   "));
  EXPECT_THAT(r.out, Not(HasSubstr("\n3   ")));
  EXPECT_THAT(r.out, HasSubstr("more letters: apollo-cli dlq list --after 2\n"));
  std::lock_guard lock(fake_.mu);
  EXPECT_EQ(fake_.last_dlq_list.after_id(), 1);
  EXPECT_EQ(fake_.last_dlq_list.limit(), 1);
}

TEST_F(CliBusTest, BadArgumentsAreUsageErrors) {
  for (std::vector<std::string> args : {std::vector<std::string>{"dlq", "replay"},
                                        {"dlq", "replay", "3", "--all"},
                                        {"dlq", "show"},
                                        {"dlq", "show", "abc"},
                                        {"dlq", "drop", "-4"},
                                        {"dlq"},
                                        {"bus"}}) {
    CliRun r = Cli(args);
    ExpectOneErrorLine(r);
    EXPECT_EQ(r.code, 2) << ::testing::PrintToString(args) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(CliBusTest, UnknownLetterIsOneLine) {
  for (const char* cmd : {"show", "replay", "drop"}) {
    CliRun r = Cli({"dlq", cmd, "42"});
    ExpectOneErrorLine(r);
    EXPECT_EQ(r.err, "apollo-cli: no dead letter 42\n") << cmd;
  }
}

TEST_F(CliBusTest, BusStatusCountsTheQueue) {
  {
    std::lock_guard lock(fake_.mu);
    fake_.bus_status.set_backend("nats://127.0.0.1:4222");
    fake_.bus_status.add_partitions()->set_published(4);
  }
  AddLetter(Letter(1, "a", "r"));
  CliRun r = Cli({"bus", "status", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["backend"], "nats://127.0.0.1:4222");
  EXPECT_EQ(j["dead_letters"], 1);
  EXPECT_EQ(j["totals"]["published"], 4);
  CliRun text = Cli({"bus", "status"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, StartsWith("bus: nats://127.0.0.1:4222 (1 partitions)\n"));
}

}  // namespace
}  // namespace apollo::cli::test_support
