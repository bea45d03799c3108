// The intent hold on its own, and in a session over real gRPC on
// 127.0.0.1:0: a lone intent goes at once; intents sent while the agent has
// not answered wait and go together when it sends events, or after the
// hold limit when it sends nothing; a Cancel never overtakes them; while
// the center is busy even a lone intent waits, and an answer does not
// release it: only the busy limit does.
#include "orchestrator/intent_hold.h"

#include <gtest/gtest.h>

#include "orchestrator/testing/gateway_fixture.h"

namespace apollo::orchestrator {
namespace {

using apollo::v1::AgentMessage;
using apollo::v1::CenterMessage;
using std::chrono::milliseconds;

CenterMessage Intents(std::initializer_list<std::string> task_ids,
                      apollo::v1::Priority priority = apollo::v1::PRIORITY_NORMAL) {
  CenterMessage msg;
  for (const std::string& id : task_ids) {
    auto* i = msg.mutable_intents()->add_intents();
    i->set_task_id(id);
    i->set_priority(priority);
  }
  return msg;
}

std::vector<std::string> TaskIds(const CenterMessage& msg) {
  std::vector<std::string> ids;
  for (const auto& i : msg.intents().intents()) ids.push_back(i.task_id());
  return ids;
}

using Ids = std::vector<std::string>;

TEST(IntentHoldTest, ALoneMessageGoesAtOnceAndTheNextWaitsForTheAnswer) {
  IntentHold hold;
  auto now = hold.Offer(Intents({"a"}));
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(TaskIds(*now), Ids{"a"});
  EXPECT_FALSE(hold.holding());

  EXPECT_FALSE(hold.Offer(Intents({"b", "c"})).has_value());
  EXPECT_FALSE(hold.Offer(Intents({"d"})).has_value());
  EXPECT_TRUE(hold.holding());
  EXPECT_EQ(hold.messages_held(), 2);

  auto together = hold.Answered();
  ASSERT_TRUE(together.has_value());
  EXPECT_EQ(TaskIds(*together), (Ids{"b", "c", "d"}));
  EXPECT_FALSE(hold.holding());
  // What went with the answer is unanswered in turn.
  EXPECT_FALSE(hold.Offer(Intents({"e"})).has_value());
  ASSERT_TRUE(hold.Answered().has_value());
  // Answered with nothing held: the next goes at once again.
  EXPECT_FALSE(hold.Answered().has_value());
  EXPECT_TRUE(hold.Offer(Intents({"f"})).has_value());
}

TEST(IntentHoldTest, ReleaseSendsTheHeldMessageHighPriorityFirst) {
  IntentHold hold;
  ASSERT_TRUE(hold.Offer(Intents({"a"})).has_value());
  EXPECT_FALSE(hold.Release().has_value());  // nothing held
  EXPECT_FALSE(hold.Offer(Intents({"low"}, apollo::v1::PRIORITY_LOW)).has_value());
  EXPECT_FALSE(hold.Offer(Intents({"n1", "n2"})).has_value());
  EXPECT_FALSE(hold.Offer(Intents({"high"}, apollo::v1::PRIORITY_HIGH)).has_value());
  auto released = hold.Release();
  ASSERT_TRUE(released.has_value());
  EXPECT_EQ(TaskIds(*released), (Ids{"high", "n1", "n2", "low"}));
  // Released, not answered: the next one waits.
  EXPECT_FALSE(hold.Offer(Intents({"b"})).has_value());
}

TEST(IntentHoldTest, AHeldMessageNeverPassesTheByteBound) {
  const size_t one = Intents({"t-000"}).intents().ByteSizeLong();
  IntentHold hold(/*max_bytes=*/3 * one);
  ASSERT_TRUE(hold.Offer(Intents({"t-000"})).has_value());
  std::vector<CenterMessage> sent;
  for (int i = 1; i <= 7; ++i) {
    const std::string id = "t-00" + std::to_string(i);  // same size as "t-000"
    if (auto now = hold.Offer(Intents({id}))) sent.push_back(std::move(*now));
  }
  if (auto rest = hold.Release()) sent.push_back(std::move(*rest));
  ASSERT_EQ(sent.size(), 3u);  // 3 + 3 + 1
  EXPECT_EQ(TaskIds(sent[0]), (Ids{"t-001", "t-002", "t-003"}));
  EXPECT_EQ(TaskIds(sent[1]), (Ids{"t-004", "t-005", "t-006"}));
  EXPECT_EQ(TaskIds(sent[2]), Ids{"t-007"});
  for (const auto& m : sent) EXPECT_LE(m.intents().ByteSizeLong(), 3 * one);
}

TEST(IntentHoldTest, WhileTheCenterIsBusyALoneMessageWaitsAndAnAnswerDoesNotReleaseIt) {
  IntentHold hold;
  EXPECT_FALSE(hold.Offer(Intents({"a"}), /*busy=*/true).has_value());
  EXPECT_EQ(hold.last_offer(), Held::kBusy);
  EXPECT_EQ(hold.why(), Held::kBusy);
  // No longer busy: it joins the held message all the same (order).
  EXPECT_FALSE(hold.Offer(Intents({"b"}), /*busy=*/false).has_value());
  EXPECT_EQ(hold.last_offer(), Held::kBusy);
  EXPECT_FALSE(hold.Answered().has_value());
  EXPECT_TRUE(hold.holding());
  auto both = hold.Release();  // the busy limit passed
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(TaskIds(*both), (Ids{"a", "b"}));
  EXPECT_EQ(hold.why(), Held::kNo);
  // What went is unanswered: the next one waits for the answer, which
  // releases it (not busy now).
  EXPECT_FALSE(hold.Offer(Intents({"c"})).has_value());
  EXPECT_EQ(hold.last_offer(), Held::kUnanswered);
  EXPECT_EQ(hold.why(), Held::kUnanswered);
  auto c = hold.Answered();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(TaskIds(*c), Ids{"c"});
  ASSERT_FALSE(hold.Answered().has_value());
  EXPECT_TRUE(hold.Offer(Intents({"d"})).has_value());
  EXPECT_EQ(hold.last_offer(), Held::kNo);
  EXPECT_EQ(hold.messages_held(), 3);
}

TEST(SessionTrafficTest, BusyFromTheThresholdOfBatchesCommittingAndNeverAtZero) {
  SessionTraffic traffic(/*busy_at=*/3);
  SessionTraffic never(/*busy_at=*/0);
  for (int i = 0; i < 2; ++i) {
    traffic.BatchRead();
    never.BatchRead();
  }
  EXPECT_FALSE(traffic.busy());
  traffic.BatchRead();
  never.BatchRead();
  EXPECT_EQ(traffic.batches_committing(), 3);
  EXPECT_TRUE(traffic.busy());
  EXPECT_FALSE(never.busy());
  traffic.BatchCommitted();
  EXPECT_FALSE(traffic.busy());

  traffic.IntentsOffered(Held::kNo);
  traffic.IntentsOffered(Held::kBusy);
  traffic.IntentsOffered(Held::kUnanswered);
  traffic.IntentsOffered(Held::kBusy);
  traffic.IntentMessageSent(5);
  traffic.IntentMessageSent(2);
  const SessionTraffic::Counts c = traffic.counts();
  EXPECT_EQ(c.offered, 4);
  EXPECT_EQ(c.held_busy, 2);
  EXPECT_EQ(c.held_unanswered, 1);
  EXPECT_EQ(c.sent, 2);
  EXPECT_EQ(c.intents_sent, 7);
}

class SessionIntentHoldTest : public testing::GatewayTest {
 protected:
  // The limit: long, so only the agent's answer (or a Cancel) releases
  // held intents in time, except where a test sets it short.
  void SetUp() override { Start(std::chrono::seconds(30)); }
  void Start(Duration hold_limit) {
    GatewayOptions o;
    o.intent_hold_limit = hold_limit;
    Start(o);
  }
  void Start(GatewayOptions o) {
    Serve(o);
    ASSERT_TRUE(Connect(agent_, "edge-1"));
    handle_ = host_.WaitHandle();
    ASSERT_TRUE(handle_);
  }
  void TearDown() override {
    host_.CommitHeld();  // each batch's done is called exactly once
    agent_.ctx.TryCancel();
    (void)agent_.stream->Finish();
    testing::GatewayTest::TearDown();
  }
  // The agent answers: an EventBatch with one event of its own.
  void Answer() {
    AgentMessage events;
    auto* e = events.mutable_events()->add_events();
    e->set_node_id("edge-1");
    e->set_event_id("ev-" + std::to_string(++answers_));
    ASSERT_TRUE(agent_.stream->Write(events));
  }
  CenterMessage Next() {
    CenterMessage msg;
    EXPECT_TRUE(agent_.stream->Read(&msg));
    return msg;
  }

  testing::TestAgent agent_;
  std::shared_ptr<SessionHandle> handle_;
  int answers_ = 0;
};

TEST_F(SessionIntentHoldTest, IntentsSentWhileUnansweredGoTogetherWhenTheAgentAnswers) {
  ASSERT_TRUE(handle_->Send(Intents({"a"})));
  EXPECT_EQ(TaskIds(Next()), Ids{"a"});
  ASSERT_TRUE(handle_->Send(Intents({"b"})));
  ASSERT_TRUE(handle_->Send(Intents({"c", "d"})));
  Answer();
  EXPECT_EQ(TaskIds(Next()), (Ids{"b", "c", "d"}));
}

class ShortHoldTest : public SessionIntentHoldTest {
 protected:
  void SetUp() override { Start(milliseconds(50)); }
};

TEST_F(ShortHoldTest, AnAgentThatAnswersNothingGetsHeldIntentsAfterTheLimit) {
  ASSERT_TRUE(handle_->Send(Intents({"a"})));
  EXPECT_EQ(TaskIds(Next()), Ids{"a"});
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(handle_->Send(Intents({"b"})));
  ASSERT_TRUE(handle_->Send(Intents({"c"})));
  EXPECT_EQ(TaskIds(Next()), (Ids{"b", "c"}));
  const auto waited = std::chrono::steady_clock::now() - sent;
  EXPECT_GE(waited, milliseconds(45));  // held, not sent at once
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST_F(SessionIntentHoldTest, ACancelGoesAfterHeldIntentsAndAnAckMayOvertakeThem) {
  ASSERT_TRUE(handle_->Send(Intents({"a"})));
  EXPECT_EQ(TaskIds(Next()), Ids{"a"});
  ASSERT_TRUE(handle_->Send(Intents({"b"})));
  CenterMessage ack;
  ack.mutable_ack()->set_acked_seq(7);
  ASSERT_TRUE(handle_->Send(ack));
  CenterMessage cancel;
  cancel.mutable_cancel()->set_task_id("b");
  ASSERT_TRUE(handle_->Send(cancel));
  CenterMessage first = Next();
  EXPECT_TRUE(first.has_ack()) << first.ShortDebugString();  // it went while "b" was held
  EXPECT_EQ(first.ack().acked_seq(), 7u);
  EXPECT_EQ(TaskIds(Next()), Ids{"b"});  // released by the Cancel, before it
  EXPECT_EQ(Next().cancel().task_id(), "b");
}

class BusyCenterTest : public SessionIntentHoldTest {
 protected:
  static constexpr milliseconds kBusyLimit{300};
  void SetUp() override {
    GatewayOptions o;
    o.intent_hold_limit = std::chrono::seconds(30);  // only the busy limit releases in time
    o.busy_batches = 2;
    o.busy_hold_limit = kBusyLimit;
    Start(o);
  }
};

TEST_F(BusyCenterTest, IntentsWaitForTheBusyLimitWhateverTheAgentAnswers) {
  host_.HoldCommits();  // the store is behind: two batches stay committing
  Answer();
  Answer();
  ASSERT_TRUE(host_.WaitBatches(2));
  ASSERT_TRUE(gateway_->traffic()->busy());

  // Nothing is unanswered, yet a lone intent waits: the center is busy.
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(handle_->Send(Intents({"a"})));
  ASSERT_TRUE(handle_->Send(Intents({"b"})));
  Answer();  // and an answer does not release them
  ASSERT_TRUE(host_.WaitBatches(3));
  EXPECT_EQ(TaskIds(Next()), (Ids{"a", "b"}));
  const auto waited = std::chrono::steady_clock::now() - sent;
  EXPECT_GE(waited, kBusyLimit - milliseconds(20));
  EXPECT_LT(waited, std::chrono::seconds(5));

  // The store catches up: no longer busy, the Nagle rule alone again.
  host_.CommitHeld();
  EXPECT_FALSE(gateway_->traffic()->busy());
  Answer();  // answers "a b"
  ASSERT_TRUE(host_.WaitBatches(4));
  ASSERT_TRUE(handle_->Send(Intents({"c"})));
  EXPECT_EQ(TaskIds(Next()), Ids{"c"});  // at once

  const SessionTraffic::Counts c = gateway_->traffic()->counts();
  EXPECT_EQ(c.offered, 3);
  EXPECT_EQ(c.held_busy, 2);
  EXPECT_EQ(c.held_unanswered, 0);
  EXPECT_EQ(c.sent, 2);
  EXPECT_EQ(c.intents_sent, 3);
  EXPECT_EQ(gateway_->traffic()->batches_committing(), 0);
}

}  // namespace
}  // namespace apollo::orchestrator
