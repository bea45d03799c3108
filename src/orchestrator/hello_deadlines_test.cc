#include "orchestrator/hello_deadlines.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace apollo::orchestrator {
namespace {

using std::chrono::seconds;

struct FakeStream final : HelloWaiter {
  int timed_out = 0;
  void HelloTimedOut() override { ++timed_out; }
};

TEST(HelloDeadlinesTest, EndsOnlyStreamsPastTheirDeadline) {
  ManualClock clock;
  std::vector<std::string> log;
  HelloDeadlines d(seconds(10), clock, [&](const std::string& l) { log.push_back(l); });
  FakeStream early, late, polite;
  d.Add(&early);
  clock.Advance(seconds(4));
  d.Add(&late);
  d.Add(&polite);
  d.Remove(&polite);  // said Hello
  EXPECT_EQ(d.waiting(), 2u);
  clock.Advance(seconds(5));  // early: 9 s old
  EXPECT_EQ(d.Expire(clock.Now()), 0);
  clock.Advance(seconds(1));  // early: 10 s
  EXPECT_EQ(d.Expire(clock.Now()), 1);
  EXPECT_EQ(early.timed_out, 1);
  EXPECT_EQ(late.timed_out, 0);
  clock.Advance(seconds(4));
  EXPECT_EQ(d.Expire(clock.Now()), 1);
  EXPECT_EQ(late.timed_out, 1);
  EXPECT_EQ(polite.timed_out, 0);
  EXPECT_EQ(d.waiting(), 0u);  // forgotten once ended: nothing grows
  EXPECT_EQ(d.expired_total(), 2);
  clock.Advance(seconds(60));
  EXPECT_EQ(d.Expire(clock.Now()), 0);  // each stream is ended once
  EXPECT_EQ(early.timed_out, 1);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], "closed 1 agent stream(s) that sent no Hello within 10s");
}

TEST(HelloDeadlinesTest, ThousandsOfSilentStreamsAllEnd) {
  ManualClock clock;
  HelloDeadlines d(seconds(1), clock);
  std::vector<FakeStream> streams(5000);
  for (auto& s : streams) d.Add(&s);
  clock.Advance(seconds(1));
  EXPECT_EQ(d.Expire(clock.Now()), 5000);
  for (const auto& s : streams) EXPECT_EQ(s.timed_out, 1);
  EXPECT_EQ(d.waiting(), 0u);
}

TEST(HelloDeadlinesTest, TheThreadSweepsOnItsOwn) {
  RealClock clock;
  HelloDeadlines d(std::chrono::milliseconds(50), clock);
  d.Start();
  FakeStream s;
  d.Add(&s);
  // Bounded: the sweeper runs every 10 ms.
  for (int i = 0; i < 200 && d.waiting() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  d.Stop();
  EXPECT_EQ(d.waiting(), 0u);
  EXPECT_EQ(d.expired_total(), 1);
}

}  // namespace
}  // namespace apollo::orchestrator
