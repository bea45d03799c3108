// The EventBus conformance suite, run against every backend: ordering,
// dedup, dead letters, replay, lag. Crash and server-restart scenarios are in
// bus_crash_test.cc.
#include <thread>

#include "bus/testing/bus_fixture.h"

namespace apollo::bus::testing {
namespace {

std::string T(int i) { return "t" + std::to_string(i); }

TEST_P(BusConformanceTest, EventsOfATaskApplyInPublishOrder) {
  // Small store applies: a backlog is applied in several, in order (NATS: a
  // fetch of several ~6-event messages is split at message boundaries).
  options_.batch_max = 10;
  OpenBus();
  constexpr int kTasks = 24;
  std::vector<std::string> tasks;
  for (int i = 0; i < kTasks; ++i) tasks.push_back(T(i));
  CreateDispatched(tasks, "n1");
  // Five rounds, each one batch touching every task: ACCEPTED, 3x PROGRESS,
  // SUCCEEDED. Published without waiting, so consumers see a backlog.
  std::vector<std::future<Result<PublishAck>>> pending;
  uint64_t seq = 0;
  const EventType kinds[] = {EventType::kAccepted, EventType::kProgress, EventType::kProgress,
                             EventType::kProgress, EventType::kSucceeded};
  for (EventType k : kinds) {
    std::vector<Event> batch;
    for (const std::string& t : tasks) batch.push_back(Ev(t, "n1", ++seq, k, "{}"));
    pending.push_back(bus_->Publish("n1", std::move(batch)));
  }
  uint64_t acked = 0;
  for (auto& f : pending) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    Result<PublishAck> r = f.get();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->dead_lettered, 0u);
    acked = std::max(acked, r->acked_seq);
  }
  EXPECT_EQ(acked, seq);
  for (const std::string& t : tasks) {
    EXPECT_EQ(StateOf(t, "n1"), TaskState::kSucceeded) << t;
    EXPECT_GE(ExpectAppliedInOrder(t), 0) << t;
  }
  auto al = store_->ListAlerts(0, 100);
  ASSERT_TRUE(al.ok());
  EXPECT_TRUE(al->empty()) << al->front().kind << " " << al->front().detail;
}

TEST_P(BusConformanceTest, RepublishedBatchIsAppliedOnce) {
  OpenBus();
  CreateDispatched({"a", "b"}, "n1");
  std::vector<Event> batch = {Ev("a", "n1", 1, EventType::kAccepted),
                              Ev("b", "n1", 2, EventType::kAccepted),
                              Ev("a", "n1", 3, EventType::kSucceeded, "{\"ok\":1}")};
  // Twice at once (an agent resending while the first copy is in flight),
  // then once more after the commit.
  auto f1 = bus_->Publish("n1", batch);
  auto f2 = bus_->Publish("n1", batch);
  for (auto* f : {&f1, &f2}) {
    ASSERT_EQ(f->wait_for(std::chrono::seconds(30)), std::future_status::ready);
    Result<PublishAck> r = f->get();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->acked_seq, 3u);
  }
  Result<PublishAck> r3 = PublishWait("n1", batch);
  ASSERT_TRUE(r3.ok()) << r3.status().ToString();
  EXPECT_EQ(r3->acked_seq, 3u);
  EXPECT_EQ(AppliedCount("a", "n1-1"), 1);
  EXPECT_EQ(AppliedCount("a", "n1-3"), 1);
  EXPECT_EQ(AppliedCount("b", "n1-2"), 1);
  EXPECT_EQ(StateOf("a", "n1"), TaskState::kSucceeded);
}

TEST_P(BusConformanceTest, PoisonEventsAreDeadLetteredAndThePartitionFlows) {
  options_.partitions = 1;  // everything shares the poison's partition
  OpenBus();
  CreateDispatched({"a", "b"}, "n1");
  std::vector<Event> batch = {Ev("a", "n1", 1, EventType::kAccepted),
                              Ev("ghost", "n1", 2, EventType::kAccepted),
                              Ev("b", "n1", 3, EventType::kAccepted, "{not json"),
                              Ev("b", "n1", 4, EventType::kAccepted)};
  Result<PublishAck> r = PublishWait("n1", batch);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->committed, 2u);
  EXPECT_EQ(r->dead_lettered, 2u);
  EXPECT_EQ(r->acked_seq, 1u) << "the agent keeps what is parked: acked stops below it";
  ASSERT_EQ(r->outcomes.size(), 4u);
  EXPECT_EQ(r->outcomes[0], store::Outcome::kApplied);
  EXPECT_EQ(r->outcomes[1], std::nullopt);
  EXPECT_EQ(r->outcomes[2], std::nullopt);
  EXPECT_EQ(r->outcomes[3], store::Outcome::kApplied);
  EXPECT_EQ(StateOf("a", "n1"), TaskState::kRunning);
  EXPECT_EQ(StateOf("b", "n1"), TaskState::kRunning);
  auto letters = store_->ListDeadLetters(0, 10);
  ASSERT_TRUE(letters.ok()) << letters.status().ToString();
  ASSERT_EQ(letters->size(), 2u);
  EXPECT_EQ((*letters)[0].event.event_id(), "n1-2");
  EXPECT_NE((*letters)[0].reason.find("unknown task ghost"), std::string::npos);
  EXPECT_EQ((*letters)[0].deliveries, options_.max_deliver);
  EXPECT_EQ((*letters)[1].event.event_id(), "n1-3");
  EXPECT_NE((*letters)[1].reason.find("malformed"), std::string::npos);
  ASSERT_EQ(alerts().size(), 2u);
  EXPECT_EQ(alerts()[0].kind, "dead_letter");
  // A resend of the parked events (agent reconnect) does not park them twice.
  Result<PublishAck> again = PublishWait("n1", batch);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(store_->ListDeadLetters(0, 10)->size(), 2u);
}

// NATS carries one message per (publish call x partition): a poison event in
// the middle of such a group must be parked alone, its neighbours applied
// once, and later publishes to the partition must not wait for it.
TEST_P(BusConformanceTest, PoisonInsideAGroupIsParkedAloneAndThePartitionFlows) {
  options_.partitions = 1;  // the whole batch is one group (NATS: one message)
  options_.max_deliver = 6;
  options_.redeliver_delay = std::chrono::milliseconds(200);  // ~6 s to park
  OpenBus();
  CreateDispatched({"a", "b", "c"}, "n1");
  auto first = bus_->Publish("n1", {Ev("a", "n1", 1, EventType::kAccepted),
                                    Ev("b", "n1", 2, EventType::kAccepted),
                                    Ev("ghost", "n1", 3, EventType::kAccepted),
                                    Ev("c", "n1", 4, EventType::kAccepted),
                                    Ev("a", "n1", 5, EventType::kSucceeded)});
  // The next batch of the same partition commits while the poison is still
  // being retried.
  Result<PublishAck> second = PublishWait("n1", {Ev("b", "n1", 6, EventType::kSucceeded),
                                                 Ev("c", "n1", 7, EventType::kSucceeded)});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->committed, 2u);
  EXPECT_TRUE(store_->ListDeadLetters(0, 10)->empty()) << "the partition waited for the poison";
  EXPECT_EQ(StateOf("a", "n1"), TaskState::kSucceeded);
  EXPECT_EQ(StateOf("b", "n1"), TaskState::kSucceeded);
  EXPECT_EQ(StateOf("c", "n1"), TaskState::kSucceeded);
  // Lag counts events: 7 published, 6 applied, the poison pending. (NATS
  // acks are asynchronous: the server's count follows shortly.)
  Result<std::vector<PartitionLag>> lag = Status::Unavailable("");
  for (int i = 0; i < 100; ++i) {
    lag = bus_->Lag();
    ASSERT_TRUE(lag.ok()) << lag.status().ToString();
    if ((*lag)[0].pending <= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ((*lag)[0].published, 7u);
  EXPECT_EQ((*lag)[0].applied, 6u);
  EXPECT_EQ((*lag)[0].pending, 1u);

  ASSERT_EQ(first.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  Result<PublishAck> r = first.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->committed, 4u);
  EXPECT_EQ(r->dead_lettered, 1u);
  EXPECT_EQ(r->acked_seq, 2u) << "acked stops below the parked event";
  auto letters = store_->ListDeadLetters(0, 10);
  ASSERT_TRUE(letters.ok()) << letters.status().ToString();
  ASSERT_EQ(letters->size(), 1u);
  EXPECT_EQ((*letters)[0].event.event_id(), "n1-3");
  EXPECT_NE((*letters)[0].reason.find("unknown task ghost"), std::string::npos);
  EXPECT_EQ((*letters)[0].deliveries, options_.max_deliver);
  for (const auto& [task, id] : std::vector<std::pair<std::string, std::string>>{
           {"a", "n1-1"}, {"b", "n1-2"}, {"c", "n1-4"}, {"a", "n1-5"}, {"b", "n1-6"},
           {"c", "n1-7"}}) {
    EXPECT_EQ(AppliedCount(task, id), 1) << id;
  }
  for (int i = 0; i < 100; ++i) {
    lag = bus_->Lag();
    ASSERT_TRUE(lag.ok());
    if ((*lag)[0].pending == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ((*lag)[0].published, 7u);
  EXPECT_EQ((*lag)[0].applied, 7u) << "a redelivered group counted its events twice";
  EXPECT_EQ((*lag)[0].pending, 0u);
  EXPECT_EQ((*lag)[0].dead_lettered, 1u);
}

TEST_P(BusConformanceTest, ReplayAfterTheFixAndDropCloseTheGap) {
  options_.partitions = 1;
  OpenBus();
  CreateDispatched({"a"}, "n1");
  std::vector<Event> batch = {Ev("a", "n1", 1, EventType::kAccepted),
                              Ev("late", "n1", 2, EventType::kAccepted),
                              Ev("a", "n1", 3, EventType::kProgress, "{bad"),
                              Ev("a", "n1", 4, EventType::kSucceeded)};
  ASSERT_TRUE(PublishWait("n1", batch).ok());
  auto letters = store_->ListDeadLetters(0, 10);
  ASSERT_TRUE(letters.ok()) << letters.status().ToString();
  ASSERT_EQ(letters->size(), 2u);
  int64_t ghost = (*letters)[0].id, bad = (*letters)[1].id;
  // Not fixed yet: the letter stays.
  Status early = bus_->ReplayDeadLetter(ghost);
  EXPECT_EQ(early.code(), StatusCode::kFailedPrecondition) << early.ToString();
  // The fix: the task now exists (e.g. restored). Replay applies it.
  CreateDispatched({"late"}, "n1");
  Status s = bus_->ReplayDeadLetter(ghost);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(StateOf("late", "n1"), TaskState::kRunning);
  EXPECT_EQ(store_->GetDeadLetter(ghost).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store_->HighestStoredSeq("n1"), 2u);
  // The malformed one cannot be fixed: drop it; the gap closes.
  EXPECT_EQ(bus_->ReplayDeadLetter(bad).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(bus_->DropDeadLetter(bad).ok());
  EXPECT_EQ(*store_->HighestStoredSeq("n1"), 4u);
  EXPECT_TRUE(store_->ListDeadLetters(0, 10)->empty());
  EXPECT_EQ(bus_->ReplayDeadLetter(bad).code(), StatusCode::kNotFound);
  auto all = bus_->ReplayAllDeadLetters();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, 0);
}

TEST_P(BusConformanceTest, LagRisesWhileEventsWaitAndFallsWhenApplied) {
  options_.partitions = 2;
  options_.max_deliver = 4;
  options_.redeliver_delay = std::chrono::milliseconds(150);  // 150+300+600 ms
  OpenBus();
  CreateDispatched({"a", "b"}, "n1");
  // Two events per task: on NATS one message carries each task's pair, and
  // the figures must still count events.
  ASSERT_TRUE(PublishWait("n1", {Ev("a", "n1", 1, EventType::kAccepted),
                                 Ev("b", "n1", 2, EventType::kAccepted),
                                 Ev("a", "n1", 3, EventType::kProgress, "{}"),
                                 Ev("b", "n1", 4, EventType::kProgress, "{}")})
                  .ok());
  Result<std::vector<PartitionLag>> lag = Status::Unavailable("");
  for (int i = 0; i < 100; ++i) {
    lag = bus_->Lag();
    ASSERT_TRUE(lag.ok()) << lag.status().ToString();
    if ((*lag)[0].pending + (*lag)[1].pending == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(lag->size(), 2u);
  uint64_t published = 0, applied = 0;
  for (const auto& l : *lag) {
    published += l.published;
    applied += l.applied;
    EXPECT_EQ(l.pending, 0u);
    EXPECT_EQ(l.oldest_unapplied_age.count(), 0);
  }
  EXPECT_EQ(published, 4u);
  EXPECT_EQ(applied, 4u);
  const uint64_t in_a = (PartitionOf("a", 2) == 0 ? 2u : 0u) + (PartitionOf("b", 2) == 0 ? 2u : 0u);
  EXPECT_EQ((*lag)[0].published, in_a);
  EXPECT_EQ((*lag)[1].published, 4u - in_a);
  // A poison event is retried for ~1 s before it is parked: it is lag.
  auto f = bus_->Publish("n1", {Ev("ghost", "n1", 5, EventType::kAccepted)});
  const int p = PartitionOf("ghost", 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  lag = bus_->Lag();
  ASSERT_TRUE(lag.ok());
  EXPECT_EQ((*lag)[p].pending, 1u);
  EXPECT_GE((*lag)[p].oldest_unapplied_age, std::chrono::milliseconds(300));
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  ASSERT_TRUE(f.get().ok());
  // NATS acks are asynchronous: the server's count follows shortly.
  for (int i = 0; i < 100; ++i) {
    lag = bus_->Lag();
    ASSERT_TRUE(lag.ok());
    if ((*lag)[p].pending == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ((*lag)[p].pending, 0u);
  EXPECT_EQ((*lag)[p].dead_lettered, 1u);
  EXPECT_EQ((*lag)[p].oldest_unapplied_age.count(), 0);
}

TEST_P(BusConformanceTest, PublishOnAStoppedBusIsUnavailable) {
  OpenBus();
  bus_->Stop();
  auto r = PublishWait("n1", {Ev("a", "n1", 1, EventType::kAccepted)});
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  auto wrong = bus_->Publish("n1", {Ev("a", "n2", 1, EventType::kAccepted)}).get();
  EXPECT_FALSE(wrong.ok());
}

TEST(PartitionOf, IsStableAndSpreads) {
  EXPECT_EQ(PartitionOf("task-1", 16), PartitionOf("task-1", 16));
  EXPECT_EQ(PartitionOf("anything", 1), 0);
  std::vector<int> hits(16);
  for (int i = 0; i < 1600; ++i) ++hits[PartitionOf("t" + std::to_string(i), 16)];
  for (int h : hits) EXPECT_GT(h, 50);
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Backends, BusConformanceTest,
                         ::testing::Values(EmbeddedBackend(), NatsBackend()),
                         [](const auto& info) { return info.param->Name(); });

}  // namespace apollo::bus::testing
