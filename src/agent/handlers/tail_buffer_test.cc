#include "agent/handlers/tail_buffer.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace apollo::agent {
namespace {

// Hides lines "#hide..." whose rest is "me"; keeps other "#hide" lines.
class HidingTailTest : public ::testing::Test {
 protected:
  std::string Run(const std::vector<std::string>& chunks, size_t max_line = 64) {
    TailBuffer tail(1 << 20);
    HidingTail hiding(tail, "#hide", max_line, [this](std::string_view line) {
      asked_.emplace_back(line);
      return line == "#hide me";
    });
    for (const auto& c : chunks) hiding.Feed(c);
    hiding.Finish();
    return tail.Tail();
  }
  std::vector<std::string> asked_;
};

TEST_F(HidingTailTest, ClaimedLinesAreLeftOutEverythingElseKeptAsWritten) {
  EXPECT_EQ(Run({"a\n#hide me\nb\r\n#hide other\n\n#hid\n"}), "a\nb\r\n#hide other\n\n#hid\n");
  EXPECT_EQ(asked_, (std::vector<std::string>{"#hide me", "#hide other"}));
}

TEST_F(HidingTailTest, LinesSplitAcrossChunksAtAnyByte) {
  const std::string text = "out 1\n#hide me\r\n#hide other\nout 2\n#hide me";
  const std::string want = "out 1\n#hide other\nout 2\n";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    EXPECT_EQ(Run({text.substr(0, cut), text.substr(cut)}), want) << "cut at " << cut;
  }
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  EXPECT_EQ(Run(bytes), want);
}

TEST_F(HidingTailTest, LastLineWithoutNewlineIsDecidedAtFinish) {
  EXPECT_EQ(Run({"x\n#hide me"}), "x\n");
  EXPECT_EQ(Run({"x\n#hide you"}), "x\n#hide you");
  EXPECT_EQ(Run({"x\n#hi"}), "x\n#hi");
}

TEST_F(HidingTailTest, OverlongMarkerLinesAreOutputNotHeldForever) {
  const std::string line = "#hide " + std::string(100, 'y') + "\n";
  EXPECT_EQ(Run({line.substr(0, 50), line.substr(50)}, 32), line);
  EXPECT_TRUE(asked_.empty());
}

}  // namespace
}  // namespace apollo::agent
