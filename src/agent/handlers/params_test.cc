#include "agent/handlers/params.h"

#include <gtest/gtest.h>

#include "agent/handlers/tail_buffer.h"

namespace apollo::agent {
namespace {

using nlohmann::json;

TEST(ParamsTest, TypedGetters) {
  json p = {{"s", "x"}, {"n", 2.5}, {"l", {"a", "b"}}, {"m", {{"k", "v"}}}, {"z", nullptr}};
  EXPECT_EQ(*RequiredString("h", p, "s"), "x");
  EXPECT_EQ(RequiredString("h", p, "z").status().message(), "h: params.z is required");
  EXPECT_EQ(RequiredString("h", p, "n").status().message(), "h: params.n must be a string");
  EXPECT_EQ(**OptionalNumber("h", p, "n", 0, 3), 2.5);
  EXPECT_FALSE(OptionalNumber("h", p, "n", 0, 1).ok());
  EXPECT_EQ(**OptionalStringList("h", p, "l", true), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(OptionalStringMap("h", p, "m")->at("k"), "v");
  EXPECT_FALSE(OptionalString("h", p, "absent")->has_value());
  EXPECT_TRUE(CheckParamsObject("h", nullptr).ok());
  EXPECT_FALSE(CheckParamsObject("h", json::array()).ok());
}

TEST(ParamsTest, ToValidUtf8) {
  EXPECT_EQ(ToValidUtf8("plain"), "plain");
  EXPECT_EQ(ToValidUtf8("h\xC3\xA9"), "h\xC3\xA9");
  EXPECT_EQ(ToValidUtf8("\xFF"), "\xEF\xBF\xBD");
  EXPECT_EQ(ToValidUtf8("\xC3"), "\xEF\xBF\xBD");          // cut in half
  EXPECT_EQ(ToValidUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80").size(), 9u);       // surrogate
}

TEST(TailBufferTest, KeepsOnlyTheLastBytes) {
  TailBuffer tail(4);
  tail.Append("ab");
  EXPECT_EQ(tail.Tail(), "ab");
  EXPECT_FALSE(tail.truncated());
  for (int i = 0; i < 100; ++i) tail.Append("xyz");
  tail.Append("1234567");
  EXPECT_EQ(tail.Tail(), "4567");
  EXPECT_TRUE(tail.truncated());
  EXPECT_EQ(tail.total_bytes(), 2u + 300u + 7u);
}

TEST(LineSplitterTest, SplitsAndCutsLongLines) {
  std::vector<std::string> lines;
  LineSplitter split(5, [&](std::string_view l) { lines.emplace_back(l); });
  split.Feed("ab");
  split.Feed("c\nverylongline\nx");
  split.Finish();
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "veryl", "x"}));
}

}  // namespace
}  // namespace apollo::agent
