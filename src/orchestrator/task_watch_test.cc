#include "orchestrator/task_watch.h"

#include <gtest/gtest.h>

#include <thread>

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

}  // namespace
}  // namespace apollo::orchestrator
