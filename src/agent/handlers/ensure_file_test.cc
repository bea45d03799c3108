#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/test_util.h"

namespace apollo::agent {
namespace {

using nlohmann::json;
using testing::TempDir;
using testing::TestRun;

class EnsureFileTest : public ::testing::Test {
 protected:
  HandlerResult Ensure(json params) {
    TestRun run("ensure_file", std::move(params));
    auto handler = NewEnsureFileHandler();
    return RunHandler(*handler, run.ctx);
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static struct stat Stat(const std::string& path) {
    struct stat st = {};
    EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
    return st;
  }
  TempDir dir_;
};

TEST_F(EnsureFileTest, ChangedThenUnchanged) {
  const std::string path = dir_.File("app.conf");
  HandlerResult r = Ensure({{"path", path}, {"content", "port=80\n"}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result, json({{"changed", true}, {"path", path}}));
  EXPECT_EQ(Read(path), "port=80\n");
  EXPECT_EQ(Stat(path).st_mode & 07777, 0644u);
  const struct stat before = Stat(path);

  r = Ensure({{"path", path}, {"content", "port=80\n"}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["changed"], false);
  const struct stat after = Stat(path);
  EXPECT_EQ(after.st_ino, before.st_ino) << "unchanged content must not be rewritten";
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

TEST_F(EnsureFileTest, NewContentReplacesAtomicallyAndLeavesNoTempFile) {
  const std::string path = dir_.File("app.conf");
  ASSERT_EQ(Ensure({{"path", path}, {"content", "v1"}}).outcome, Outcome::kSucceeded);
  const ino_t first = Stat(path).st_ino;
  HandlerResult r = Ensure({{"path", path}, {"content", "v2"}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["changed"], true);
  EXPECT_EQ(Read(path), "v2");
  EXPECT_NE(Stat(path).st_ino, first) << "replaced by rename, not rewritten in place";
  EXPECT_EQ(dir_.List(), std::vector<std::string>{"app.conf"});
}

TEST_F(EnsureFileTest, ModeIsAppliedAsStringOrInteger) {
  const std::string path = dir_.File("secret");
  HandlerResult r = Ensure({{"path", path}, {"content", "k"}, {"mode", "0600"}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(Stat(path).st_mode & 07777, 0600u);

  // Same content, other mode: changed, by chmod alone.
  const ino_t ino = Stat(path).st_ino;
  r = Ensure({{"path", path}, {"content", "k"}, {"mode", 0640}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["changed"], true);
  EXPECT_EQ(Stat(path).st_mode & 07777, 0640u);
  EXPECT_EQ(Stat(path).st_ino, ino);

  r = Ensure({{"path", path}, {"content", "k"}, {"mode", "640"}});
  EXPECT_EQ(r.result["changed"], false);
  // Without a mode, the existing mode is kept on a content change.
  r = Ensure({{"path", path}, {"content", "k2"}});
  EXPECT_EQ(r.result["changed"], true);
  EXPECT_EQ(Stat(path).st_mode & 07777, 0640u);
}

TEST_F(EnsureFileTest, EmptyContentIsAFile) {
  const std::string path = dir_.File("empty");
  EXPECT_EQ(Ensure({{"path", path}, {"content", ""}}).result["changed"], true);
  EXPECT_EQ(Ensure({{"path", path}, {"content", ""}}).result["changed"], false);
}

TEST_F(EnsureFileTest, SymlinkIsReplacedNotFollowed) {
  const std::string target = dir_.File("target");
  const std::string link = dir_.File("link");
  ASSERT_EQ(Ensure({{"path", target}, {"content", "t"}}).outcome, Outcome::kSucceeded);
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  HandlerResult r = Ensure({{"path", link}, {"content", "t"}});
  EXPECT_EQ(r.result["changed"], true);
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(Ensure({{"path", link}, {"content", "t"}}).result["changed"], false);
}

TEST_F(EnsureFileTest, BadParamsAreFailed) {
  const std::string ok = dir_.File("f");
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"content", "x"}}, "ensure_file: params.path is required"},
      {{{"path", ok}}, "ensure_file: params.content is required"},
      {{{"path", 7}, {"content", "x"}}, "ensure_file: params.path must be a string"},
      {{{"path", ok}, {"content", 7}}, "ensure_file: params.content must be a string"},
      {{{"path", "rel/f"}, {"content", "x"}}, "ensure_file: params.path must be an absolute file path"},
      {{{"path", ok + "/"}, {"content", "x"}}, "ensure_file: params.path must be an absolute file path"},
      {json("str"), "ensure_file: params must be an object"},
  };
  for (const auto& [params, message] : cases) {
    HandlerResult r = Ensure(params);
    EXPECT_EQ(r.outcome, Outcome::kFailed) << params.dump();
    EXPECT_EQ(r.error, message) << params.dump();
  }
  for (json mode : {json("0999"), json("abc"), json(""), json(99999), json(-1), json(true),
                    json("077777")}) {
    HandlerResult r = Ensure({{"path", ok}, {"content", "x"}, {"mode", mode}});
    EXPECT_EQ(r.outcome, Outcome::kFailed) << mode.dump();
    EXPECT_NE(r.error.find("params.mode"), std::string::npos) << r.error;
  }
  EXPECT_TRUE(dir_.List().empty());
}

TEST_F(EnsureFileTest, UnwritablePlacesAreFailed) {
  HandlerResult r = Ensure({{"path", dir_.File("no/such/dir/f")}, {"content", "x"}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_NE(r.error.find("cannot create temp file"), std::string::npos) << r.error;

  r = Ensure({{"path", dir_.path()}, {"content", "x"}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_NE(r.error.find("is a directory"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace apollo::agent
