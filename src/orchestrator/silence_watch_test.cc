#include "orchestrator/silence_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace apollo::orchestrator {
namespace {

using Steady = std::chrono::steady_clock;
using std::chrono::seconds;

struct FakePeer final : SilentPeer {
  std::optional<Steady::time_point> heard;
  std::atomic<int> timed_out{0};
  Duration silent{0};
  std::optional<Steady::time_point> LastHeard() const override { return heard; }
  void SilenceTimedOut(Duration d) override {
    ++timed_out;
    silent = d;
  }
};

TEST(SilenceWatchTest, EndsOnlyPeersSilentPastTheLimit) {
  std::vector<std::string> log;
  SilenceWatch w(seconds(25), [&](const std::string& l) { log.push_back(l); });
  const Steady::time_point t0 = Steady::now();
  FakePeer quiet, chatty, paused;
  quiet.heard = t0;
  chatty.heard = t0;
  paused.heard = std::nullopt;  // the center is not reading it
  w.Add(&quiet);
  w.Add(&chatty);
  w.Add(&paused);
  EXPECT_EQ(w.watched(), 3u);
  EXPECT_EQ(w.Expire(t0 + seconds(25)), 0);  // exactly the limit: not yet
  chatty.heard = t0 + seconds(20);
  EXPECT_EQ(w.Expire(t0 + seconds(26)), 1);
  EXPECT_EQ(quiet.timed_out, 1);
  EXPECT_EQ(quiet.silent, seconds(26));
  EXPECT_EQ(chatty.timed_out, 0);
  EXPECT_EQ(paused.timed_out, 0);
  EXPECT_EQ(w.watched(), 2u);  // forgotten once ended: each peer ends once
  EXPECT_EQ(w.Expire(t0 + seconds(46)), 1);
  EXPECT_EQ(chatty.timed_out, 1);
  EXPECT_EQ(w.Expire(t0 + seconds(500)), 0);
  EXPECT_EQ(quiet.timed_out, 1);
  EXPECT_EQ(paused.timed_out, 0);
  EXPECT_EQ(w.expired_total(), 2);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0],
            "closed 1 agent stream(s) silent for 2.5 heartbeat intervals (25s or more; the "
            "longest silent for 26s): link cut or agent stuck; they reconnect when they can");
}

TEST(SilenceWatchTest, APeerToldToBeatLessOftenMayBeQuietLonger) {
  SilenceWatch w(seconds(25));
  const Steady::time_point t0 = Steady::now();
  FakePeer paced, shorter;
  paced.heard = t0;
  shorter.heard = t0;
  w.Add(&paced, seconds(125));   // told every 50 s
  w.Add(&shorter, seconds(10));  // never below the watch's own limit
  EXPECT_EQ(w.Expire(t0 + seconds(26)), 1);
  EXPECT_EQ(shorter.timed_out, 1);
  EXPECT_EQ(w.Expire(t0 + seconds(125)), 0);
  EXPECT_EQ(w.Expire(t0 + seconds(126)), 1);
  EXPECT_EQ(paced.timed_out, 1);
}

TEST(SilenceWatchTest, ExtendLengthensAWatchedPeersLimitOnly) {
  SilenceWatch w(seconds(25));
  const Steady::time_point t0 = Steady::now();
  FakePeer p, gone;
  p.heard = t0;
  gone.heard = t0;
  w.Add(&p);
  w.Extend(&p, seconds(75));  // told a slower pace
  w.Extend(&p, seconds(30));  // never shortened
  w.Extend(&gone, seconds(75));  // not watched: not added
  EXPECT_EQ(w.watched(), 1u);
  EXPECT_EQ(w.Expire(t0 + seconds(75)), 0);
  EXPECT_EQ(w.Expire(t0 + seconds(76)), 1);
  EXPECT_EQ(p.timed_out, 1);
  EXPECT_EQ(gone.timed_out, 0);
}

TEST(SilenceWatchTest, SweepsAnEighthOfTheShortestLimitWatched) {
  using std::chrono::milliseconds;
  SilenceWatch w(seconds(25));
  EXPECT_EQ(w.tick(), milliseconds(3125));  // nothing watched: the base limit
  const Steady::time_point t0 = Steady::now();
  FakePeer a, b, c;
  a.heard = b.heard = c.heard = t0;
  w.Add(&a, seconds(125));  // a fleet paced to beat every 50 s
  w.Add(&b, seconds(125));
  EXPECT_EQ(w.tick(), milliseconds(3125));  // Add never lengthens it
  EXPECT_EQ(w.Expire(t0 + seconds(1)), 0);
  EXPECT_EQ(w.tick(), milliseconds(15625));  // the sweep learns the limits
  w.Add(&c);  // a peer at the base limit: sweeps come often again at once
  EXPECT_EQ(w.tick(), milliseconds(3125));
  w.Remove(&c);
  EXPECT_EQ(w.Expire(t0 + seconds(2)), 0);
  EXPECT_EQ(w.tick(), milliseconds(15625));
  w.Add(&c, seconds(3600));
  w.Remove(&a);
  w.Remove(&b);
  EXPECT_EQ(w.Expire(t0 + seconds(3)), 0);
  EXPECT_EQ(w.tick(), seconds(30));  // at most 30 s between sweeps
}

TEST(SilenceWatchTest, RemovedPeersAreNeverCalled) {
  SilenceWatch w(seconds(1));
  const Steady::time_point t0 = Steady::now();
  FakePeer p;
  p.heard = t0;
  w.Add(&p);
  w.Remove(&p);
  w.Remove(&p);  // twice: harmless
  EXPECT_EQ(w.Expire(t0 + seconds(60)), 0);
  EXPECT_EQ(p.timed_out, 0);
}

TEST(SilenceWatchTest, ALimitOfZeroWatchesNothing) {
  SilenceWatch w(Duration{0});
  w.Start();  // no thread
  FakePeer p;
  p.heard = Steady::now() - seconds(3600);
  w.Add(&p);
  EXPECT_EQ(w.watched(), 0u);
  EXPECT_EQ(w.Expire(Steady::now()), 0);
}

TEST(SilenceWatchTest, TheThreadSweepsOnItsOwn) {
  SilenceWatch w(std::chrono::milliseconds(100));
  FakePeer silent, alive;
  silent.heard = Steady::now();
  alive.heard = std::nullopt;
  w.Add(&silent);
  w.Add(&alive);
  w.Start();
  const auto deadline = Steady::now() + seconds(10);
  while (silent.timed_out.load() == 0 && Steady::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  w.Stop();
  EXPECT_EQ(silent.timed_out.load(), 1);
  EXPECT_EQ(alive.timed_out.load(), 0);
}

}  // namespace
}  // namespace apollo::orchestrator
