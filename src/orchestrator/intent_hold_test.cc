// The intent hold on its own, and in a session over real gRPC on
// 127.0.0.1:0: a lone intent goes at once; intents sent while the agent has
// not answered wait and go together when it sends events, or after the
// hold limit when it sends nothing; a Cancel never overtakes them.
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

class SessionIntentHoldTest : public testing::GatewayTest {
 protected:
  // The limit: long, so only the agent's answer (or a Cancel) releases
  // held intents in time, except where a test sets it short.
  void SetUp() override { Start(std::chrono::seconds(30)); }
  void Start(Duration hold_limit) {
    GatewayOptions o;
    o.intent_hold_limit = hold_limit;
    Serve(o);
    ASSERT_TRUE(Connect(agent_, "edge-1"));
    handle_ = host_.WaitHandle();
    ASSERT_TRUE(handle_);
  }
  void TearDown() override {
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

}  // namespace
}  // namespace apollo::orchestrator
