// CutAtWholeRounds (round_cut.h): a send round reaches the store in one op
// when its parts arrive close together, per-partition order always holds,
// and nothing waits longer than max_wait.
#include "bus/nats/round_cut.h"

#include <gtest/gtest.h>

namespace apollo::bus::nats {
namespace {

const Instant kT0 = Instant{} + std::chrono::hours(1);
constexpr Duration kWait = std::chrono::milliseconds(5);

Waiting W(std::string_view round, size_t parts, int at_ms = 0) {
  return Waiting{round, parts, kT0 + std::chrono::milliseconds(at_ms)};
}

TEST(RoundCut, TagsRoundTripAndBadOnesAreRoundsOfOne) {
  auto t = ParseRoundTag(FormatRoundTag("a1b2.17", 16).c_str());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->id, "a1b2.17");
  EXPECT_EQ(t->parts, 16u);
  for (const char* bad : {"", "/3", "abc", "abc/", "abc/0", "abc/x3"}) {
    EXPECT_FALSE(ParseRoundTag(bad).has_value()) << bad;
  }
  EXPECT_FALSE(ParseRoundTag(nullptr).has_value());
}

TEST(RoundCut, CompleteRoundsAreTakenWhole) {
  // Round r1 (3 parts) complete; r2 (2 parts) complete.
  std::vector<std::vector<Waiting>> q = {{W("r1", 3), W("r2", 2)}, {W("r1", 3)},
                                         {W("r1", 3), W("r2", 2)}};
  Cut c = CutAtWholeRounds(q, kT0, kWait);
  EXPECT_EQ(c.take, (std::vector<size_t>{2, 1, 2}));
  EXPECT_FALSE(c.recheck.has_value());
}

TEST(RoundCut, AnIncompleteRoundAndEverythingBehindItWait) {
  // r2 has 3 parts, 2 handed over; r3 is behind r2 in partition 0, so it
  // waits too even though it is complete (its part in partition 2 also).
  std::vector<std::vector<Waiting>> q = {{W("r1", 2), W("r2", 3), W("r3", 2)},
                                         {W("r1", 2), W("r2", 3)},
                                         {W("r3", 2)}};
  Cut c = CutAtWholeRounds(q, kT0 + std::chrono::milliseconds(1), kWait);
  EXPECT_EQ(c.take, (std::vector<size_t>{1, 1, 0}));
  ASSERT_TRUE(c.recheck.has_value());
  EXPECT_EQ(*c.recheck, kT0 + kWait);
  // Once the missing part arrives, everything goes.
  q[2].insert(q[2].begin(), W("r2", 3, 2));
  c = CutAtWholeRounds(q, kT0 + std::chrono::milliseconds(2), kWait);
  EXPECT_EQ(c.take, (std::vector<size_t>{3, 2, 2}));
}

TEST(RoundCut, NothingWaitsLongerThanMaxWait) {
  std::vector<std::vector<Waiting>> q = {{W("r1", 4), W("r2", 1)}, {W("r1", 4)}};
  Cut early = CutAtWholeRounds(q, kT0 + std::chrono::milliseconds(4), kWait);
  EXPECT_EQ(early.take, (std::vector<size_t>{0, 0}));
  EXPECT_EQ(early.expired, 0u);
  Cut late = CutAtWholeRounds(q, kT0 + kWait, kWait);
  EXPECT_EQ(late.take, (std::vector<size_t>{2, 1}));
  EXPECT_FALSE(late.recheck.has_value());
  EXPECT_EQ(late.expired, 1u);
  // No wait at all (holding switched off): taken at once, counted.
  Cut off = CutAtWholeRounds(q, kT0, Duration{0});
  EXPECT_EQ(off.take, (std::vector<size_t>{2, 1}));
  EXPECT_EQ(off.expired, 1u);
}

TEST(RoundCut, UntaggedMessagesNeverWait) {
  std::vector<std::vector<Waiting>> q = {{W("", 1), W("", 1)}, {}};
  Cut c = CutAtWholeRounds(q, kT0, kWait);
  EXPECT_EQ(c.take, (std::vector<size_t>{2, 0}));
}

}  // namespace
}  // namespace apollo::bus::nats
