// The callback notifier remembers settled tasks only in bounded numbers:
// once delivered, the oldest are forgotten beyond remember_done.
#include "orchestrator/callback_notifier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "orchestrator/testing/temp_store.h"

namespace apollo::orchestrator {
namespace {

class CountingPoster final : public HttpPoster {
 public:
  Status Post(const std::string&, const std::string&, Duration, const std::vector<std::string>&,
              const std::string&) override {
    posts.fetch_add(1);
    return Status::Ok();
  }
  std::atomic<int> posts{0};
};

TEST(CallbackNotifierTest, RemembersOnlyTheLastFinishedTasks) {
  ManualClock clock;
  testing::TempStore temp(clock);
  ASSERT_TRUE(temp.status().ok());
  store::StateStore& store = *temp.store();
  std::vector<store::NewTask> tasks;
  for (int t = 0; t < 30; ++t) {
    TaskSpec s;
    s.task_id = "cb-" + std::to_string(t);
    s.intent = "collect_metrics";
    s.target_selector.type = SelectorType::kNodes;
    s.target_selector.nodes = {"edge-1"};
    s.callback_url = "http://hooks.internal/done";
    tasks.push_back({s, {"edge-1"}, std::chrono::seconds(0)});
  }
  ASSERT_TRUE(store.CreateTasks(tasks).ok());
  for (const auto& t : tasks) {  // settled: cancelled
    store::TransitionRequest r;
    r.task_id = t.spec.task_id;
    r.node_id = "edge-1";
    r.to = TaskState::kCancelled;
    r.cause = store::Cause::kCancel;
    ASSERT_TRUE(store.Transition(std::span<const store::TransitionRequest>(&r, 1)).ok());
  }
  CountingPoster poster;
  CallbackOptions o;
  o.allowed_hosts = {"hooks.internal"};
  o.remember_done = 5;
  CallbackNotifier notifier(o, store, poster, clock);
  notifier.Start();
  for (const auto& t : tasks) {
    notifier.TaskMayHaveSettled(t.spec.task_id);
    notifier.TaskMayHaveSettled(t.spec.task_id);  // a duplicate trigger: one job
  }
  for (int i = 0; i < 500 && poster.posts.load() < 30; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Bounded wait for the last Done() after its POST.
  for (int i = 0; i < 500 && notifier.remembered() > 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(poster.posts.load(), 30);
  EXPECT_EQ(notifier.remembered(), 5u);  // not 30: the oldest were forgotten
  // A remembered task is not sent again.
  notifier.TaskMayHaveSettled("cb-29");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(poster.posts.load(), 30);
  notifier.Stop();
}

}  // namespace
}  // namespace apollo::orchestrator
