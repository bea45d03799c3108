#include "core/log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace apollo::log {
namespace {

constexpr int64_t kAt = 1764625407123456;  // 2025-12-01T21:43:27.123456Z

TEST(LogTest, TextIsThePrefixedMessageAsBefore) {
  EXPECT_EQ(FormatLine("orchestrator", Format::kText, Level::kInfo, "listening on 127.0.0.1:7011",
                       {}, kAt),
            "orchestrator: listening on 127.0.0.1:7011\n");
  EXPECT_EQ(FormatLine("edge-agent", Format::kText, Level::kWarning, "disk full", {}, kAt),
            "edge-agent: WARNING: disk full\n");
  EXPECT_EQ(FormatLine("orchestrator", Format::kText, Level::kAlert, "dead letter e1",
                       Fields::Of("t1"), kAt),
            "orchestrator: ALERT: dead letter e1\n");
}

TEST(LogTest, JsonIsOneObjectPerLineWithTheTasksFields) {
  const std::string line =
      FormatLine("edge-agent", Format::kJson, Level::kInfo, "intent \"exec\" started",
                 Fields::Of("t1", "worker-1", 2u), kAt);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["ts"], "2025-12-01T21:43:27.123456Z");
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["daemon"], "edge-agent");
  EXPECT_EQ(j["msg"], "intent \"exec\" started");
  EXPECT_EQ(j["task_id"], "t1");
  EXPECT_EQ(j["node_id"], "worker-1");
  EXPECT_EQ(j["attempt"], 2);
  EXPECT_FALSE(j.contains("event_id"));  // empty fields are left out
}

TEST(LogTest, JsonSurvivesBytesThatAreNotUtf8AndNewlines) {
  const std::string line = FormatLine("edge-agent", Format::kJson, Level::kError,
                                      std::string("bad \xff output\nsecond line"), {}, kAt);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["level"], "error");
  EXPECT_NE(j["msg"].get<std::string>().find("second line"), std::string::npos);
}

TEST(LogTest, ParseFormatNamesTheChoices) {
  EXPECT_EQ(*ParseFormat("json"), Format::kJson);
  EXPECT_EQ(*ParseFormat("text"), Format::kText);
  auto bad = ParseFormat("yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("text or json"), std::string::npos);
}

}  // namespace
}  // namespace apollo::log
