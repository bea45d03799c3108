// The center never sends an agent a message larger than the agent accepts:
// intents are packed by bytes under the constants both sides compile
// against (core/wire_limits.h).
#include "orchestrator/intent_batches.h"

#include <gtest/gtest.h>

#include "core/task_spec.h"

namespace apollo::orchestrator {
namespace {

apollo::v1::Intent Sized(int n, size_t params_bytes) {
  apollo::v1::Intent i;
  i.set_task_id("task-" + std::to_string(n));
  i.set_attempt(1);
  i.set_intent("exec");
  i.set_params_json("{\"p\":\"" + std::string(params_bytes, 'x') + "\"}");
  return i;
}

TEST(IntentBatchesTest, EveryMessageFitsTheAgentsLimitAndOrderIsKept) {
  // 300 intents at the largest params a task file may carry: ~19 MiB,
  // far more than the agent takes in one message.
  const size_t params = ParseLimits{}.max_payload_bytes - 16;
  std::vector<apollo::v1::Intent> intents;
  for (int n = 0; n < 300; ++n) intents.push_back(Sized(n, params));
  auto messages = BatchIntents(intents);
  ASSERT_GT(messages.size(), 1u);
  int next = 0;
  for (const auto& m : messages) {
    ASSERT_TRUE(m.has_intents());
    EXPECT_LE(m.intents().ByteSizeLong(), kIntentBatchBytes);
    EXPECT_LE(m.ByteSizeLong(), kAgentMaxReceiveBytes);
    for (const auto& i : m.intents().intents())
      EXPECT_EQ(i.task_id(), "task-" + std::to_string(next++));
  }
  EXPECT_EQ(next, 300);
}

TEST(IntentBatchesTest, SmallIntentsShareOneMessage) {
  std::vector<apollo::v1::Intent> intents;
  for (int n = 0; n < 500; ++n) intents.push_back(Sized(n, 100));
  auto messages = BatchIntents(intents);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].intents().intents_size(), 500);
  EXPECT_TRUE(BatchIntents({}).empty());
}

TEST(IntentBatchesTest, AnIntentLargerThanABatchGoesAlone) {
  std::vector<apollo::v1::Intent> intents{Sized(0, 10), Sized(1, 5000), Sized(2, 10)};
  auto messages = BatchIntents(intents, /*max_bytes=*/1000);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[1].intents().intents(0).task_id(), "task-1");
}

// The largest intent a submission can make, in a full batch, still fits.
TEST(IntentBatchesTest, TheLargestIntentFitsTheAgentsLimit) {
  apollo::v1::Intent big = Sized(0, ParseLimits{}.max_payload_bytes);
  for (int k = 0; k < 1000; ++k) {
    (*big.mutable_metadata())["k" + std::to_string(k)] = std::string(60, 'm');
  }
  EXPECT_LE(big.ByteSizeLong(), kMaxIntentBytes);
  EXPECT_LE(kIntentBatchBytes + kMaxIntentBytes, kAgentMaxReceiveBytes);
}

}  // namespace
}  // namespace apollo::orchestrator
