#include "core/event.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace apollo {
namespace {

Event Sample() {
  Event e;
  e.task_id = "collect-metrics-1712345678-b7e2";
  e.node_id = "edge-01";
  e.sequence_number = 42;
  e.attempt = 2;
  e.type = EventType::kSucceeded;
  e.timestamp = FromUnixMicros(1'712'345'678'123'456);
  e.payload = R"({"load1":0.5})";
  return e;
}

TEST(EventTest, IdIsNodeDashSeq) {
  EXPECT_EQ(Sample().event_id(), "edge-01-42");
  auto parts = ParseEventId("edge-01-42");
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->node_id, "edge-01");
  EXPECT_EQ(parts->sequence_number, 42u);
  for (const char* bad : {"", "edge", "-5", "edge-", "edge-0", "edge-x1", "edge-1x"}) {
    EXPECT_FALSE(ParseEventId(bad).ok()) << bad;
  }
}

TEST(EventTest, BinaryRoundTrip) {
  Event e = Sample();
  auto back = DecodeEvent(EncodeEvent(e));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, e);
}

TEST(EventTest, DecodeRejectsGarbageAndMismatchedIds) {
  EXPECT_FALSE(DecodeEvent("\xff\xff\xff garbage").ok());
  Event e = Sample();
  e.sequence_number = 0;
  EXPECT_FALSE(DecodeEvent(EncodeEvent(e)).ok());
  e = Sample();
  e.payload = "{not json";
  auto r = DecodeEvent(EncodeEvent(e));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("payload is not valid JSON"), std::string::npos);
  e = Sample();
  e.type = static_cast<EventType>(99);
  EXPECT_FALSE(DecodeEvent(EncodeEvent(e)).ok());
}

TEST(EventTest, JsonFormForHumans) {
  nlohmann::json j = EventToJson(Sample());
  EXPECT_EQ(j["event_id"], "edge-01-42");
  EXPECT_EQ(j["event_type"], "SUCCEEDED");
  EXPECT_EQ(j["timestamp"], "2024-04-05T19:34:38.123456Z");
  EXPECT_EQ(j["payload"]["load1"], 0.5);
  auto back = EventFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->event_id(), "edge-01-42");
  EXPECT_EQ(back->type, EventType::kSucceeded);
  EXPECT_EQ(nlohmann::json::parse(back->payload), nlohmann::json::parse(Sample().payload));
  EXPECT_FALSE(EventFromJson(nlohmann::json::array()).ok());
  j["event_type"] = "EXPLODED";
  EXPECT_FALSE(EventFromJson(j).ok());
}

TEST(EventTest, TypesAndTheirTargetStates) {
  EXPECT_EQ(TargetState(EventType::kAccepted), TaskState::kRunning);
  EXPECT_EQ(TargetState(EventType::kAlreadyRunning), TaskState::kRunning);
  EXPECT_EQ(TargetState(EventType::kSucceeded), TaskState::kSucceeded);
  EXPECT_EQ(TargetState(EventType::kAlreadyDone), TaskState::kSucceeded);
  EXPECT_EQ(TargetState(EventType::kFailed), TaskState::kFailed);
  EXPECT_EQ(TargetState(EventType::kCancelled), TaskState::kCancelled);
  EXPECT_EQ(TargetState(EventType::kTimeout), TaskState::kTimeout);
  EXPECT_EQ(TargetState(EventType::kProgress), std::nullopt);
  EXPECT_EQ(TargetState(EventType::kSnapshot), std::nullopt);
  for (int t = 1; t <= 10; ++t) {
    auto type = static_cast<EventType>(t);
    EXPECT_EQ(ParseEventType(EventTypeName(type)), type);
  }
}

}  // namespace
}  // namespace apollo
