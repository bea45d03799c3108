#include "core/task_id.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

namespace apollo {
namespace {

TEST(TaskIdTest, Syntax) {
  EXPECT_EQ(TaskIdProblem("deploy-1712345678-a3f9"), "");
  EXPECT_EQ(TaskIdProblem("a.b_c-D9"), "");
  EXPECT_NE(TaskIdProblem(""), "");
  EXPECT_NE(TaskIdProblem("has space"), "");
  EXPECT_NE(TaskIdProblem("slash/no"), "");
  EXPECT_NE(TaskIdProblem("ünicode"), "");
  EXPECT_EQ(TaskIdProblem(std::string(128, 'a')), "");
  EXPECT_NE(TaskIdProblem(std::string(129, 'a')), "");
}

TEST(TaskIdTest, FormatIsDomainSecondsRandom) {
  ManualClock clock(FromUnixMicros(1'712'345'678'000'000));
  TaskIdGenerator gen(clock);
  std::string id = gen.Generate("collect_metrics");
  const std::string prefix = "collect-metrics-1712345678-";
  ASSERT_EQ(id.size(), prefix.size() + kTaskIdRandomChars) << id;
  EXPECT_EQ(id.substr(0, prefix.size()), prefix);
  for (char c : id.substr(prefix.size())) {
    EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) << id;
  }
  EXPECT_EQ(TaskIdProblem(id), "");
  // Hostile domains are sanitised and shortened, never producing an invalid id.
  std::string odd = gen.Generate(std::string(300, '/') + "x y");
  EXPECT_EQ(TaskIdProblem(odd), "") << odd;
  EXPECT_EQ(TaskIdProblem(gen.Generate("")), "");
}

constexpr std::string_view kAlphabet = "0123456789abcdefghjkmnpqrstvwxyz";

TEST(TaskIdTest, TenMillionIdsInOneSecondNeverCollide) {
  // The clock stands still: every id shares domain and seconds, so only the
  // random part can tell them apart.
  ManualClock clock(FromUnixMicros(1'712'345'678'000'000));
  TaskIdGenerator gen(clock);
  constexpr size_t kCount = 10'000'000;
  const std::string prefix = "t-1712345678-";
  std::vector<std::pair<uint64_t, uint32_t>> keys;  // the 16 chars packed
  keys.reserve(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    std::string id = gen.Generate("t");
    ASSERT_EQ(id.compare(0, prefix.size(), prefix), 0) << id;
    ASSERT_EQ(id.size(), prefix.size() + 16) << id;
    // Exact packing: 5 bits per base32 digit, 60 bits + 20 bits.
    uint64_t a = 0;
    uint32_t b = 0;
    for (size_t k = 0; k < 16; ++k) {
      size_t digit = kAlphabet.find(id[prefix.size() + k]);
      ASSERT_NE(digit, std::string_view::npos) << id;
      if (k < 12) a = a * 32 + digit;
      else b = b * 32 + static_cast<uint32_t>(digit);
    }
    keys.emplace_back(a, b);
  }
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
}

TEST(TaskIdTest, TwoGeneratorsSeededFromTheOsDiffer) {
  ManualClock clock;
  TaskIdGenerator a(clock), b(clock);
  EXPECT_NE(a.Generate("x"), b.Generate("x"));
}

}  // namespace
}  // namespace apollo
