#include "core/dag.h"

#include <gtest/gtest.h>

namespace apollo {
namespace {

TEST(DagTest, NoCycleInADiamond) {
  std::vector<DagNode> g = {{"a", {}}, {"b", {"a"}}, {"c", {"a"}}, {"d", {"b", "c"}}};
  EXPECT_EQ(FindCycle(g), std::nullopt);
  auto order = TopologicalOrder(g);
  ASSERT_TRUE(order.has_value());
  EXPECT_EQ(*order, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(DagTest, OrderPutsDepsFirstWhateverTheInputOrder) {
  std::vector<DagNode> g = {{"deploy", {"test"}}, {"test", {"build"}}, {"build", {}}};
  EXPECT_EQ(*TopologicalOrder(g), (std::vector<std::string>{"build", "test", "deploy"}));
}

TEST(DagTest, FindsTheCycleAndNamesIt) {
  std::vector<DagNode> g = {{"x", {}}, {"a", {"b"}}, {"b", {"c"}}, {"c", {"a"}}};
  auto cycle = FindCycle(g);
  ASSERT_TRUE(cycle.has_value());
  EXPECT_EQ(FormatCycle(*cycle), "a -> b -> c -> a");
  EXPECT_EQ(TopologicalOrder(g), std::nullopt);
}

TEST(DagTest, SelfLoopAndUnknownDeps) {
  EXPECT_EQ(FormatCycle(*FindCycle({{"a", {"a"}}})), "a -> a");
  EXPECT_EQ(FindCycle({{"a", {"elsewhere"}}}), std::nullopt);
}

TEST(DagTest, LongChainDoesNotOverflowTheStack) {
  auto name = [](int i) { return std::string("n").append(std::to_string(i)); };
  std::vector<DagNode> g;
  for (int i = 0; i < 200'000; ++i) {
    g.push_back({name(i), i ? std::vector<std::string>{name(i - 1)} : std::vector<std::string>{}});
  }
  EXPECT_EQ(FindCycle(g), std::nullopt);
  g[0].deps = {"n199999"};
  auto cycle = FindCycle(g);
  ASSERT_TRUE(cycle.has_value());
  EXPECT_EQ(cycle->size(), 200'001u);
}

}  // namespace
}  // namespace apollo
