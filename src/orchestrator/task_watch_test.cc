#include "orchestrator/task_watch.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace apollo::orchestrator {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

TEST(TaskWatchHubTest, ANotifiedChangeWakesItsWatcherAtOnce) {
  TaskWatchHub hub;
  TaskWatchHub::Watch watch(hub, "t1");
  const uint64_t seen = watch.generation();
  std::thread committer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    hub.Notify("t1");
  });
  const auto start = Steady::now();
  watch.WaitPast(seen, std::chrono::seconds(10));
  const auto waited = Steady::now() - start;
  committer.join();
  EXPECT_LT(waited, std::chrono::seconds(5));  // woken, not timed out
  EXPECT_EQ(watch.generation(), seen + 1);
}

TEST(TaskWatchHubTest, OtherTasksChangesDoNotCountAndTheWaitIsBounded) {
  TaskWatchHub hub;
  TaskWatchHub::Watch watch(hub, "t1");
  const uint64_t seen = watch.generation();
  hub.Notify("t2");
  hub.Notify("t1-suffix");
  EXPECT_EQ(watch.generation(), seen);
  const auto start = Steady::now();
  watch.WaitPast(seen, milliseconds(100));  // nothing for t1: the bound ends it
  EXPECT_GE(Steady::now() - start, milliseconds(100));
}

TEST(TaskWatchHubTest, AChangeBeforeTheWaitIsNotMissed) {
  TaskWatchHub hub;
  TaskWatchHub::Watch watch(hub, "t1");
  const uint64_t seen = watch.generation();  // read, then the task changes
  hub.Notify("t1");
  const auto start = Steady::now();
  watch.WaitPast(seen, std::chrono::seconds(10));
  EXPECT_LT(Steady::now() - start, std::chrono::seconds(5));
}

TEST(TaskWatchHubTest, TheLastWatcherLeavingForgetsTheTask) {
  TaskWatchHub hub;
  {
    TaskWatchHub::Watch a(hub, "t1");
    TaskWatchHub::Watch b(hub, "t1");
    hub.Notify("t1");
    EXPECT_EQ(a.generation(), 1u);
    EXPECT_EQ(b.generation(), 1u);
  }
  TaskWatchHub::Watch again(hub, "t1");
  EXPECT_EQ(again.generation(), 0u);  // a fresh entry: nothing was kept
}

store::TaskChange Change(const std::string& task_id, int64_t version) {
  store::TaskChange c;
  c.task_id = task_id;
  c.status = TaskState::kSucceeded;
  c.node_count = 1;
  c.nodes.push_back({});
  c.nodes.back().node_id = "n1";
  c.nodes.back().from_version = version - 1;
  c.nodes.back().version = version;
  return c;
}

TEST(TaskWatchHubTest, APublishedCommitReachesEachWatchOfItsTaskInOrder) {
  TaskWatchHub hub;
  TaskWatchHub::Watch a(hub, "t1");
  TaskWatchHub::Watch b(hub, "t1");
  TaskWatchHub::Watch other(hub, "t2");
  EXPECT_FALSE(a.Wait(milliseconds(0)));  // nothing yet
  hub.Publish(Change("t1", 3));
  hub.Publish(Change("t1", 4));
  for (TaskWatchHub::Watch* w : {&a, &b}) {
    EXPECT_TRUE(w->Wait(milliseconds(0)));
    TaskWatchHub::Watch::Changes c = w->Take();
    EXPECT_FALSE(c.stale);
    ASSERT_EQ(c.commits.size(), 2u);
    EXPECT_EQ(c.commits[0]->nodes[0].version, 3);
    EXPECT_EQ(c.commits[1]->nodes[0].version, 4);
    EXPECT_TRUE(w->Take().commits.empty()) << "taken once";
  }
  EXPECT_FALSE(other.Wait(milliseconds(0)));
  EXPECT_EQ(a.generation(), 2u);  // a published commit is a change too
}

TEST(TaskWatchHubTest, AChangeWithoutItsRowsMakesTheWatchStale) {
  TaskWatchHub hub;
  TaskWatchHub::Watch watch(hub, "t1");
  hub.Publish(Change("t1", 3));
  hub.Notify("t1");
  TaskWatchHub::Watch::Changes c = watch.Take();
  EXPECT_TRUE(c.stale);
  EXPECT_FALSE(watch.Take().stale) << "read once, fresh again";
}

TEST(TaskWatchHubTest, AWatchThatFallsBehindIsStaleNotUnbounded) {
  TaskWatchHub hub;
  TaskWatchHub::Watch watch(hub, "t1");
  for (size_t i = 0; i < TaskWatchHub::Watch::kMaxQueued + 5; ++i) {
    hub.Publish(Change("t1", static_cast<int64_t>(i)));
  }
  TaskWatchHub::Watch::Changes c = watch.Take();
  EXPECT_TRUE(c.stale);
  EXPECT_EQ(c.commits.size(), TaskWatchHub::Watch::kMaxQueued);
}

TEST(TaskWatchHubTest, APublishWakesAWaitingWatcherAtOnce) {
  TaskWatchHub hub;
  TaskWatchHub::Watch watch(hub, "t1");
  std::thread committer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    hub.Publish(Change("t1", 3));
  });
  const auto start = Steady::now();
  EXPECT_TRUE(watch.Wait(std::chrono::seconds(10)));
  committer.join();
  EXPECT_LT(Steady::now() - start, std::chrono::seconds(5));
}

TEST(TaskWatchHubTest, AFeedSeesEveryChangedTaskOnceInOrderAndOnlyAfterItOpened) {
  TaskWatchHub hub;
  hub.Notify("before");  // no feed yet: not kept
  TaskWatchHub::Feed feed(hub);
  for (const char* id : {"a", "b", "a", "c", "b"}) hub.Notify(id);
  TaskWatchHub::Feed::Changes c = feed.Next(milliseconds(0), 2);
  EXPECT_FALSE(c.overflow);
  EXPECT_EQ(c.task_ids, (std::vector<std::string>{"a", "b"}));
  c = feed.Next(milliseconds(0), 100);  // the later changes, each task once
  EXPECT_EQ(c.task_ids, (std::vector<std::string>{"a", "c", "b"}));
  c = feed.Next(milliseconds(0), 100);
  EXPECT_TRUE(c.task_ids.empty());
  EXPECT_FALSE(c.overflow);
}

TEST(TaskWatchHubTest, AFeedIsWokenByAChangeAndItsWaitIsBounded) {
  TaskWatchHub hub;
  TaskWatchHub::Feed feed(hub);
  auto start = Steady::now();
  EXPECT_TRUE(feed.Next(milliseconds(100), 10).task_ids.empty());
  EXPECT_GE(Steady::now() - start, milliseconds(100));
  std::thread committer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    hub.Notify("t9");
  });
  start = Steady::now();
  TaskWatchHub::Feed::Changes c = feed.Next(std::chrono::seconds(10), 10);
  committer.join();
  EXPECT_LT(Steady::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(c.task_ids, (std::vector<std::string>{"t9"}));
}

TEST(TaskWatchHubTest, AFeedThatFallsBehindTheRingIsToldToReRead) {
  TaskWatchHub hub;
  TaskWatchHub::Feed slow(hub);
  for (size_t i = 0; i < TaskWatchHub::kFeedRing + 1; ++i) hub.Notify("t" + std::to_string(i));
  TaskWatchHub::Feed::Changes c = slow.Next(milliseconds(0), 10);
  EXPECT_TRUE(c.overflow);
  EXPECT_TRUE(c.task_ids.empty());
  hub.Notify("after");  // caught up again: reads on from here
  c = slow.Next(milliseconds(0), 10);
  EXPECT_FALSE(c.overflow);
  EXPECT_EQ(c.task_ids, (std::vector<std::string>{"after"}));
}

TEST(TaskWatchHubTest, ExactlyARingOfChangesBehindIsNotAnOverflow) {
  TaskWatchHub hub;
  TaskWatchHub::Feed feed(hub);
  for (size_t i = 0; i < TaskWatchHub::kFeedRing; ++i) hub.Notify("t" + std::to_string(i));
  TaskWatchHub::Feed::Changes c = feed.Next(milliseconds(0), TaskWatchHub::kFeedRing);
  EXPECT_FALSE(c.overflow);
  ASSERT_EQ(c.task_ids.size(), TaskWatchHub::kFeedRing);
  EXPECT_EQ(c.task_ids.front(), "t0");
  EXPECT_EQ(c.task_ids.back(), "t" + std::to_string(TaskWatchHub::kFeedRing - 1));
}

}  // namespace
}  // namespace apollo::orchestrator
