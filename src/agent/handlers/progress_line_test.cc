#include "agent/handlers/progress_line.h"

#include <gtest/gtest.h>

namespace apollo::agent {
namespace {

TEST(ProgressLineTest, FractionsAndPercentagesWithOrWithoutAMessage) {
  struct Case {
    const char* line;
    double fraction;
    const char* message;
  };
  for (const Case& c : {Case{"::progress:: 0.4", 0.4, ""},
                        Case{"::progress:: 0 starting", 0.0, "starting"},
                        Case{"::progress:: 1 done", 1.0, "done"},
                        Case{"::progress:: 40%", 0.4, ""},
                        Case{"::progress:: 42.5% copying  files ", 0.425, "copying  files"},
                        Case{"::progress::\t100%\tall done\r", 1.0, "all done"},
                        Case{"::progress::0.25 no blank after the marker", 0.25,
                             "no blank after the marker"},
                        Case{"::progress::   .5   ", 0.5, ""}}) {
    auto p = ParseProgressLine(c.line);
    ASSERT_TRUE(p.has_value()) << c.line;
    EXPECT_DOUBLE_EQ(p->fraction, c.fraction) << c.line;
    EXPECT_EQ(p->message, c.message) << c.line;
  }
}

TEST(ProgressLineTest, AnythingElseIsOrdinaryOutput) {
  for (const char* line :
       {"", "progress 0.5", " ::progress:: 0.5", "::progress::", "::progress:: ",
        "::progress:: 1.5", "::progress:: 101%", "::progress:: -0.1", "::progress:: +0.5",
        "::progress:: 0.5x", "::progress:: half", "::progress:: nan", "::progress:: inf",
        "::progress:: 1e-1", "::progress:: %", "::progress:: 0..5", "::progress:: 50%%",
        "::PROGRESS:: 0.5", "::progress: 0.5"}) {
    EXPECT_FALSE(ParseProgressLine(line).has_value()) << "'" << line << "'";
  }
}

TEST(ProgressLineTest, MessageIsCutAndMadeValidUtf8) {
  auto p = ParseProgressLine("::progress:: 0.5 " + std::string(2000, 'x'));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->message.size(), kMaxProgressMessage);

  p = ParseProgressLine("::progress:: 0.5 caf\xc3");  // a cut two-byte character
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->message, "caf\xEF\xBF\xBD");
}

}  // namespace
}  // namespace apollo::agent
