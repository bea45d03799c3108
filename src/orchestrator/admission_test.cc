#include "orchestrator/admission.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <vector>

namespace apollo::orchestrator {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const TimePoint kT0 = FromUnixMicros(1'700'000'000'000'000);

AdmissionOptions Options(double max_per_s, int window) {
  AdmissionOptions o;
  o.max_per_s = max_per_s;
  o.initial_window = window;
  o.min_window = 2;
  o.max_window = 1000;
  o.target = seconds(1);
  o.expire = seconds(10);
  return o;
}

TEST(AdmissionTest, TheRateCeilingRefusesPastItsBurstAndRefills) {
  Admission a(Options(10, 1000));
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(a.TryAdmit(kT0)) << i;
  EXPECT_FALSE(a.TryAdmit(kT0));
  int later = 0;
  for (int i = 0; i < 20; ++i) later += a.TryAdmit(kT0 + milliseconds(500)) ? 1 : 0;
  EXPECT_EQ(later, 5);
  EXPECT_EQ(a.admitted(), 15);
  EXPECT_EQ(a.refused(), 16);
}

TEST(AdmissionTest, TheWindowBoundsHandshakesInFlightAndGrowsWhenTheyAreQuick) {
  Admission a(Options(1e6, 4));
  std::vector<uint64_t> tickets;
  for (int i = 0; i < 4; ++i) tickets.push_back(*a.TryAdmit(kT0));
  EXPECT_FALSE(a.TryAdmit(kT0));
  EXPECT_EQ(a.in_flight(), 4u);
  // Reconciled within the target while the window was full: one more slot
  // than before, plus the one it frees.
  a.Reconciled(tickets[0], milliseconds(100), kT0 + milliseconds(100));
  EXPECT_EQ(a.window(), 5);
  EXPECT_TRUE(a.TryAdmit(kT0 + milliseconds(100)));
  EXPECT_TRUE(a.TryAdmit(kT0 + milliseconds(100)));
  EXPECT_FALSE(a.TryAdmit(kT0 + milliseconds(100)));
  // What /metrics shows: 6 admitted, 2 refused, 5 in flight of a window of 5.
  const AdmissionCounts c = a.counts();
  EXPECT_EQ(c.admitted, 6);
  EXPECT_EQ(c.refused, 2);
  EXPECT_EQ(c.window, 5);
  EXPECT_EQ(c.in_flight, 5u);
}

TEST(AdmissionTest, AnUnusedWindowDoesNotGrow) {
  Admission a(Options(1e6, 8));
  for (int i = 0; i < 20; ++i) {
    auto t = a.TryAdmit(kT0 + seconds(i));
    ASSERT_TRUE(t);
    a.Reconciled(*t, milliseconds(10), kT0 + seconds(i) + milliseconds(10));
  }
  // One at a time never needed more than one slot: a storm later still
  // starts from the initial window.
  EXPECT_EQ(a.window(), 8);
}

TEST(AdmissionTest, ASlowHandshakeShrinksTheWindowOncePerTarget) {
  Admission a(Options(1e6, 8));
  std::vector<uint64_t> tickets;
  for (int i = 0; i < 8; ++i) tickets.push_back(*a.TryAdmit(kT0));
  a.Reconciled(tickets[0], seconds(3), kT0 + seconds(3));
  EXPECT_EQ(a.window(), 6);
  // Admitted before the cut, reporting the same overload: no second cut.
  a.Reconciled(tickets[1], seconds(3), kT0 + seconds(3) + milliseconds(500));
  EXPECT_EQ(a.window(), 6);
  a.Reconciled(tickets[2], seconds(4), kT0 + seconds(4) + milliseconds(100));
  EXPECT_EQ(a.window(), 4);
}

TEST(AdmissionTest, ASlowAgentIsNotASlowCenter) {
  Admission a(Options(1e6, 4));
  std::vector<uint64_t> tickets;
  for (int i = 0; i < 4; ++i) tickets.push_back(*a.TryAdmit(kT0));
  // Reconciled 5 s after admission, but the center spent 20 ms on it.
  a.Reconciled(tickets[0], milliseconds(20), kT0 + seconds(5));
  EXPECT_EQ(a.window(), 5);
}

TEST(AdmissionTest, AHandshakeThatNeverEndsFreesItsSlotAtExpiry) {
  Admission a(Options(1e6, 4));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(a.TryAdmit(kT0));
  EXPECT_FALSE(a.TryAdmit(kT0 + seconds(9)));
  auto t = a.TryAdmit(kT0 + seconds(11));
  EXPECT_TRUE(t);
  EXPECT_EQ(a.window(), 4);
  EXPECT_EQ(a.in_flight(), 1u);
  // An expired ticket reconciled late teaches nothing.
  a.Reconciled(1, seconds(12), kT0 + seconds(12));
  EXPECT_EQ(a.window(), 4);
}

TEST(AdmissionTest, AnAbandonedHandshakeFreesItsSlotAndLeavesTheWindow) {
  Admission a(Options(1e6, 2));
  auto t1 = a.TryAdmit(kT0);
  ASSERT_TRUE(t1);
  ASSERT_TRUE(a.TryAdmit(kT0));
  EXPECT_FALSE(a.TryAdmit(kT0));
  a.Abandoned(*t1);
  EXPECT_EQ(a.window(), 2);
  EXPECT_TRUE(a.TryAdmit(kT0));
}

// A center that reconciles `capacity` handshakes per second, first come
// first served, under a fleet that always has agents waiting: what is
// admitted per second converges to the capacity, and a handshake waits about
// the target, not for however many were let in.
struct Outcome {
  double reconciled_per_s = 0;  // over the last 30 of 60 s
  double max_wait_s = 0;        // admit -> reconciled, same period
};

Outcome Simulate(double capacity, int initial_window) {
  Admission a(Options(1e6, initial_window));
  std::deque<std::pair<uint64_t, TimePoint>> queue;  // admitted, not yet served
  double credit = 0;
  int64_t reconciled = 0;
  Outcome out;
  const auto tick = milliseconds(10);
  for (TimePoint now = kT0; now < kT0 + seconds(60); now += tick) {
    while (auto t = a.TryAdmit(now)) queue.emplace_back(*t, now);
    credit += capacity * 0.01;
    while (credit >= 1 && !queue.empty()) {
      credit -= 1;
      auto [ticket, admitted] = queue.front();
      queue.pop_front();
      a.Reconciled(ticket, now - admitted, now);
      if (now >= kT0 + seconds(30)) {
        ++reconciled;
        out.max_wait_s =
            std::max(out.max_wait_s, std::chrono::duration<double>(now - admitted).count());
      }
    }
    if (queue.empty()) credit = 0;  // an idle center banks no capacity
  }
  out.reconciled_per_s = static_cast<double>(reconciled) / 30.0;
  return out;
}

TEST(AdmissionTest, RetryAfterSpreadsTheWaitingNodesOverTheTimeToTakeThemAll) {
  // Window 50, target 1 s: before handshakes are reconciled the pace is
  // taken as 50/s.
  Admission a(Options(1e6, 50));
  std::vector<uint64_t> tickets;
  for (int i = 0; i < 50; ++i) tickets.push_back(*a.TryAdmit(kT0, "in-" + std::to_string(i)));
  ASSERT_FALSE(a.TryAdmit(kT0, "n-0"));
  EXPECT_EQ(a.RetryAfter("n-0", kT0), milliseconds(250));  // alone: at once (the floor)
  // 500 nodes waiting at 50/s: each told a moment within 10 s, spread
  // evenly; refused again, the same nodes do not lengthen the wait.
  for (int i = 0; i < 500; ++i) a.RetryAfter("n-" + std::to_string(i), kT0);
  Duration longest{0};
  int first_half = 0;
  for (int i = 0; i < 500; ++i) {
    Duration d = a.RetryAfter("n-" + std::to_string(i), kT0);
    EXPECT_GE(d, milliseconds(250));
    EXPECT_LE(d, seconds(10));
    longest = std::max(longest, d);
    first_half += d < seconds(5) ? 1 : 0;
  }
  EXPECT_GT(longest, seconds(9));
  EXPECT_GT(first_half, 200);  // ~250 expected, 11 standard deviation
  EXPECT_LT(first_half, 300);
  // 40 handshakes reconciled over 2 s: 20/s measured, but the window (grown
  // by those quick handshakes) allows more: the higher counts. 30 of the
  // waiting were admitted meanwhile: 470 wait.
  for (int i = 0; i < 40; ++i) {
    a.Reconciled(tickets[static_cast<size_t>(i)], milliseconds(10),
                 kT0 + milliseconds(50 * (i + 1)));
  }
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(a.TryAdmit(kT0 + seconds(2), "n-" + std::to_string(i)));
  Duration longest_now{0};
  for (int i = 30; i < 500; ++i) {
    longest_now = std::max(longest_now, a.RetryAfter("n-" + std::to_string(i), kT0 + seconds(2)));
  }
  const double pace = std::max(20.0, static_cast<double>(a.window()));  // per s (target 1 s)
  EXPECT_GT(a.window(), 20);
  EXPECT_LE(longest_now, std::chrono::duration<double>(470 / pace));
  EXPECT_GT(longest_now, std::chrono::duration<double>(0.8 * 470 / (pace + 1)));
  // Never more than 2 minutes, however many wait; and nodes not refused
  // again for 2 minutes are forgotten.
  for (int i = 0; i < 50'000; ++i) a.RetryAfter("m-" + std::to_string(i), kT0 + seconds(3));
  EXPECT_LE(a.RetryAfter("m-0", kT0 + seconds(3)), seconds(120));
  EXPECT_EQ(a.RetryAfter("late", kT0 + seconds(200)), milliseconds(250));
}

TEST(AdmissionTest, TheAdmittedRateSettlesAtTheCentersCapacity) {
  for (double capacity : {40.0, 300.0, 1500.0}) {
    Outcome o = Simulate(capacity, 64);
    EXPECT_GE(o.reconciled_per_s, 0.85 * capacity) << capacity;
    EXPECT_LE(o.reconciled_per_s, 1.01 * capacity) << capacity;
    EXPECT_LE(o.max_wait_s, 2.5) << capacity;
  }
}

}  // namespace
}  // namespace apollo::orchestrator
