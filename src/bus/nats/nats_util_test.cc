// The wire form of a NATS message: a group of events round-trips in order, a
// message from before groups (one apollo.v1.Event, no count header) still
// decodes, and the group's Nats-Msg-Id is deterministic and names its members.
#include "bus/nats/nats_util.h"

#include <gtest/gtest.h>

#include "bus/event_bus.h"

namespace apollo::bus::nats {
namespace {

Event Ev(const std::string& task, uint64_t seq, std::string payload = "{}") {
  Event e;
  e.task_id = task;
  e.node_id = "n1";
  e.sequence_number = seq;
  e.attempt = 2;
  e.type = EventType::kProgress;
  e.timestamp = FromUnixMicros(1'700'000'000'000'000 + static_cast<int64_t>(seq));
  e.payload = std::move(payload);
  return e;
}

TEST(NatsWire, GroupRoundTripsInOrder) {
  std::vector<Event> events = {Ev("b", 7), Ev("a", 3, "{not json"), Ev("b", 9)};
  std::vector<const Event*> group = {&events[0], &events[1], &events[2]};
  Result<std::vector<Event>> back = DecodeMessage(EncodeGroup(group), /*grouped=*/true);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 3u);
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ((*back)[i].event_id(), events[i].event_id());
    EXPECT_EQ((*back)[i].task_id, events[i].task_id);
    EXPECT_EQ((*back)[i].attempt, events[i].attempt);
    EXPECT_EQ((*back)[i].type, events[i].type);
    EXPECT_EQ((*back)[i].timestamp, events[i].timestamp);
    EXPECT_EQ((*back)[i].payload, events[i].payload) << "malformed payloads travel as they are";
  }
}

TEST(NatsWire, AMessageWithoutTheCountHeaderIsOneEvent) {
  Event e = Ev("a", 5);
  Result<std::vector<Event>> back = DecodeMessage(EncodeRaw(e), /*grouped=*/false);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].event_id(), "n1-5");
  EXPECT_EQ(DecodeMessage("\xff\xff garbage", true).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodeMessage("\xff\xff garbage", false).status().code(), StatusCode::kDataLoss);
}

TEST(NatsWire, GroupMsgIdIsDeterministicAndNamesItsMembers) {
  std::vector<Event> a = {Ev("x", 3), Ev("y", 5), Ev("x", 7)};
  std::vector<Event> again = a;  // a republished batch
  std::vector<Event> fewer = {Ev("x", 3), Ev("x", 7)};  // same ends, a member less
  auto ptrs = [](const std::vector<Event>& v) {
    std::vector<const Event*> out;
    for (const Event& e : v) out.push_back(&e);
    return out;
  };
  std::string id = GroupMsgId(4, ptrs(a));
  EXPECT_EQ(id.rfind(a[0].event_id() + ":p4:3:", 0), 0u) << id;
  EXPECT_EQ(GroupMsgId(4, ptrs(again)), id);
  EXPECT_NE(GroupMsgId(4, ptrs(fewer)), id);
  EXPECT_NE(GroupMsgId(5, ptrs(a)), id);
  std::vector<Event> other_node = a;  // same seqs from another node
  for (Event& e : other_node) e.node_id = "n2";
  EXPECT_NE(GroupMsgId(4, ptrs(other_node)), id);
}

TEST(NatsWire, ASendRoundIsOneGroupPerPartitionInCallOrder) {
  // Two Publish calls sent in one round (nats_bus.cc Send).
  std::vector<Event> first, second;
  for (uint64_t s = 1; s <= 40; ++s) first.push_back(Ev("t" + std::to_string(s % 10), s));
  for (uint64_t s = 1; s <= 40; ++s) {
    second.push_back(Ev("t" + std::to_string(s % 10), s));
    second.back().node_id = "n2";
  }
  constexpr int kParts = 4;
  std::vector<PartitionGroup> groups = GroupByPartition({&first, &second}, kParts);
  ASSERT_FALSE(groups.empty());
  EXPECT_LE(groups.size(), static_cast<size_t>(kParts));
  // Groups in order of first appearance, one per partition.
  EXPECT_EQ(groups[0].partition, PartitionOf(first[0].task_id, kParts));
  size_t total = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t h = g + 1; h < groups.size(); ++h) {
      EXPECT_NE(groups[g].partition, groups[h].partition);
    }
    // Every event in its task's partition; the first call's events before
    // the second's, each call's in its own order.
    const Event* prev = nullptr;
    for (const Event* e : groups[g].events) {
      EXPECT_EQ(PartitionOf(e->task_id, kParts), groups[g].partition);
      if (prev && prev->node_id == e->node_id) {
        EXPECT_LT(prev->sequence_number, e->sequence_number);
      }
      if (prev) {
        EXPECT_FALSE(prev->node_id == "n2" && e->node_id == "n1");
      }
      prev = e;
    }
    total += groups[g].events.size();
  }
  EXPECT_EQ(total, first.size() + second.size());
}

}  // namespace
}  // namespace apollo::bus::nats
