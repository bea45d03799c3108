#include "agent/wal/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace apollo::wal::crc32c {
namespace {

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(Value("123456789"), 0xE3069283u);
  EXPECT_EQ(Value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Value(std::string(32, '\xff')), 0x62A8AB43u);
  std::string up(32, '\0'), down(32, '\0');
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<char>(i);
    down[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(Value(up), 0x46DD794Eu);
  EXPECT_EQ(Value(down), 0x113FDB5Cu);
  EXPECT_EQ(Value(""), 0u);
}

TEST(Crc32c, PortableMatchesKnownVector) {
  EXPECT_EQ(ExtendPortable(0, "123456789", 9), 0xE3069283u);
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string s = "hello world, this is a longer string for extension";
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    uint32_t a = Value(s.data(), cut);
    EXPECT_EQ(Extend(a, s.data() + cut, s.size() - cut), Value(s)) << cut;
  }
}

TEST(Crc32c, HardwareAndPortableAgree) {
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::string s(rng() % 300, '\0');
    for (char& c : s) {
      c = static_cast<char>(rng());
    }
    size_t skew = s.empty() ? 0 : rng() % s.size();  // unaligned starts too
    EXPECT_EQ(Extend(7, s.data() + skew, s.size() - skew),
              ExtendPortable(7, s.data() + skew, s.size() - skew));
  }
}

TEST(Crc32c, MaskRoundTripsAndDiffers) {
  uint32_t crc = Value("foo");
  EXPECT_NE(crc, Mask(crc));
  EXPECT_NE(crc, Mask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Unmask(Mask(Mask(crc)))));
}

}  // namespace
}  // namespace apollo::wal::crc32c
