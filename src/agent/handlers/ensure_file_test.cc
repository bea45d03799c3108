#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/test_util.h"

namespace apollo::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;
using testing::TestRun;

// dir_/allowed is the one allowed dir; dir_/outside is not. Paths are
// canonical, so a symlinked TMPDIR does not trip the no-symlink walk.
class EnsureFileTest : public ::testing::Test {
 protected:
  EnsureFileTest() : root_(fs::canonical(dir_.path()).string()) {
    fs::create_directory(Allowed());
    fs::create_directory(Outside());
    policy_.allowed_dirs = {Allowed()};
  }

  std::string Allowed(const std::string& leaf = "") const { return Join(root_ + "/allowed", leaf); }
  std::string Outside(const std::string& leaf = "") const { return Join(root_ + "/outside", leaf); }

  HandlerResult Ensure(json params) {
    TestRun run("ensure_file", std::move(params));
    auto handler = NewEnsureFileHandler(policy_);
    return RunHandler(*handler, run.ctx);
  }
  // FAILED, permanent, with `reason` in the message.
  void ExpectRefused(const HandlerResult& r, const std::string& reason) {
    EXPECT_EQ(r.outcome, Outcome::kFailed);
    EXPECT_TRUE(r.permanent) << r.error;
    EXPECT_NE(r.error.find(reason), std::string::npos) << r.error;
  }
  static std::vector<std::string> List(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
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
  const std::string root_;
  EnsureFilePolicy policy_;

 private:
  static std::string Join(const std::string& dir, const std::string& leaf) {
    return leaf.empty() ? dir : dir + "/" + leaf;
  }
};

TEST_F(EnsureFileTest, ChangedThenUnchanged) {
  const std::string path = Allowed("app.conf");
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
  const std::string path = Allowed("app.conf");
  ASSERT_EQ(Ensure({{"path", path}, {"content", "v1"}}).outcome, Outcome::kSucceeded);
  const ino_t first = Stat(path).st_ino;
  HandlerResult r = Ensure({{"path", path}, {"content", "v2"}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["changed"], true);
  EXPECT_EQ(Read(path), "v2");
  EXPECT_NE(Stat(path).st_ino, first) << "replaced by rename, not rewritten in place";
  EXPECT_EQ(List(Allowed()), std::vector<std::string>{"app.conf"});
}

TEST_F(EnsureFileTest, DeeperDirectoriesAndSlashesInThePathWork) {
  fs::create_directories(Allowed("a/b"));
  const std::string path = root_ + "//allowed/a//b/f";
  HandlerResult r = Ensure({{"path", path}, {"content", "x"}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(Read(Allowed("a/b/f")), "x");
}

TEST_F(EnsureFileTest, ModeIsAppliedAsStringOrInteger) {
  const std::string path = Allowed("secret");
  HandlerResult r = Ensure({{"path", path}, {"content", "k"}, {"mode", "0600"}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(Stat(path).st_mode & 07777, 0600u);

  // Same content, other mode: changed, by fchmod alone.
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
  const std::string path = Allowed("empty");
  EXPECT_EQ(Ensure({{"path", path}, {"content", ""}}).result["changed"], true);
  EXPECT_EQ(Ensure({{"path", path}, {"content", ""}}).result["changed"], false);
}

TEST_F(EnsureFileTest, NoAllowedDirsRefusesEverySaysHowToAllowAndWritesNothing) {
  policy_.allowed_dirs.clear();
  HandlerResult r = Ensure({{"path", Allowed("f")}, {"content", "x"}});
  ExpectRefused(r, "ensure_file.allowed_dirs");
  EXPECT_EQ(r.detail["path"], Allowed("f"));
  EXPECT_TRUE(List(Allowed()).empty());
}

TEST_F(EnsureFileTest, OutsideAllowedDirsIsRefusedAndWritesNothing) {
  fs::create_directory(root_ + "/allowed2");
  for (const std::string& path : {Outside("f"), root_ + "/allowed2/f", root_ + "/allowed",
                                  root_ + "/f", std::string("/etc/apollo-x")}) {
    ExpectRefused(Ensure({{"path", path}, {"content", "x"}}), "outside this node's allowed_dirs");
  }
  EXPECT_TRUE(List(Outside()).empty());
  EXPECT_TRUE(List(root_ + "/allowed2").empty());
  EXPECT_EQ(List(root_), (std::vector<std::string>{"allowed", "allowed2", "outside"}));
}

TEST_F(EnsureFileTest, DotComponentsAreRefused) {
  for (const std::string& path : {Allowed("../outside/f"), Allowed("./f"), Allowed("a/../f")}) {
    ExpectRefused(Ensure({{"path", path}, {"content", "x"}}), "'.' or '..'");
  }
  EXPECT_TRUE(List(Outside()).empty());
  EXPECT_TRUE(List(Allowed()).empty());
}

TEST_F(EnsureFileTest, SetuidSetgidAndStickyModesAreRefusedUnlessAllowed) {
  const std::string path = Allowed("tool");
  for (json mode : {json("4755"), json("2755"), json("1777"), json("06755"), json(04755)}) {
    HandlerResult r = Ensure({{"path", path}, {"content", "x"}, {"mode", mode}});
    ExpectRefused(r, "setuid, setgid or sticky");
    EXPECT_NE(r.error.find("ensure_file.allow_special_modes"), std::string::npos) << r.error;
  }
  EXPECT_TRUE(List(Allowed()).empty());

  policy_.allow_special_modes = true;
  HandlerResult r = Ensure({{"path", path}, {"content", "x"}, {"mode", "4755"}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(Stat(path).st_mode & 07777, 04755u);
}

TEST_F(EnsureFileTest, ReplacedContentDoesNotInheritSetuid) {
  const std::string path = Allowed("tool");
  std::ofstream(path) << "old";
  ASSERT_EQ(chmod(path.c_str(), 04755), 0);
  HandlerResult r = Ensure({{"path", path}, {"content", "new"}});
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(Read(path), "new");
  EXPECT_EQ(Stat(path).st_mode & 07777, 0755u);

  // Allowed: kept.
  ASSERT_EQ(chmod(path.c_str(), 04755), 0);
  policy_.allow_special_modes = true;
  ASSERT_EQ(Ensure({{"path", path}, {"content", "newer"}}).outcome, Outcome::kSucceeded);
  EXPECT_EQ(Stat(path).st_mode & 07777, 04755u);
}

TEST_F(EnsureFileTest, SymlinkAsTheFileItselfIsRefusedAndLeftAlone) {
  const std::string target = Outside("target");
  const std::string link = Allowed("link");
  std::ofstream(target) << "t";
  const mode_t target_mode = Stat(target).st_mode;
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ExpectRefused(Ensure({{"path", link}, {"content", "evil"}}), "is a symbolic link");
  ExpectRefused(Ensure({{"path", link}, {"content", "t"}, {"mode", "0777"}}),
                "is a symbolic link");
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Read(target), "t");
  EXPECT_EQ(Stat(target).st_mode, target_mode);
  EXPECT_EQ(List(Allowed()), std::vector<std::string>{"link"});
}

TEST_F(EnsureFileTest, SymlinkedDirectoryAnywhereInThePathIsRefused) {
  // allowed/sub -> ../outside: a write through it would land outside.
  ASSERT_EQ(symlink(Outside().c_str(), Allowed("sub").c_str()), 0);
  HandlerResult r = Ensure({{"path", Allowed("sub/f")}, {"content", "x"}});
  ExpectRefused(r, Allowed("sub") + " is a symbolic link");
  // Deeper: allowed/real/deeper -> outside.
  fs::create_directory(Allowed("real"));
  ASSERT_EQ(symlink(Outside().c_str(), Allowed("real/deeper").c_str()), 0);
  ExpectRefused(Ensure({{"path", Allowed("real/deeper/f")}, {"content", "x"}}),
                "is a symbolic link");
  // The allowed dir itself reached through a symlink.
  ASSERT_EQ(symlink(Allowed().c_str(), (root_ + "/alias").c_str()), 0);
  policy_.allowed_dirs = {root_ + "/alias"};
  ExpectRefused(Ensure({{"path", root_ + "/alias/f"}, {"content", "x"}}),
                root_ + "/alias is a symbolic link");
  EXPECT_TRUE(List(Outside()).empty());
  EXPECT_EQ(List(Allowed()), (std::vector<std::string>{"real", "sub"}));
  EXPECT_EQ(List(Allowed("real")), std::vector<std::string>{"deeper"});
}

TEST_F(EnsureFileTest, BadParamsAreRefused) {
  const std::string ok = Allowed("f");
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"content", "x"}}, "ensure_file: params.path is required"},
      {{{"path", ok}}, "ensure_file: params.content is required"},
      {{{"path", 7}, {"content", "x"}}, "ensure_file: params.path must be a string"},
      {{{"path", ok}, {"content", 7}}, "ensure_file: params.content must be a string"},
      {{{"path", "rel/f"}, {"content", "x"}},
       "ensure_file: params.path must be an absolute file path"},
      {{{"path", ok + "/"}, {"content", "x"}},
       "ensure_file: params.path must be an absolute file path"},
      {{{"path", "/"}, {"content", "x"}}, "ensure_file: params.path must be an absolute file path"},
      {{{"path", std::string("/tmp/a\0b", 8)}, {"content", "x"}},
       "ensure_file: params.path must be an absolute file path"},
      {json("str"), "ensure_file: params must be an object"},
  };
  for (const auto& [params, message] : cases) {
    HandlerResult r = Ensure(params);
    EXPECT_EQ(r.outcome, Outcome::kFailed) << params.dump();
    EXPECT_TRUE(r.permanent) << params.dump();
    EXPECT_EQ(r.error, message) << params.dump();
  }
  for (json mode : {json("0999"), json("abc"), json(""), json(99999), json(-1), json(true),
                    json("077777")}) {
    HandlerResult r = Ensure({{"path", ok}, {"content", "x"}, {"mode", mode}});
    EXPECT_EQ(r.outcome, Outcome::kFailed) << mode.dump();
    EXPECT_TRUE(r.permanent);
    EXPECT_NE(r.error.find("params.mode"), std::string::npos) << r.error;
  }
  EXPECT_TRUE(List(Allowed()).empty());
}

// What the node's state decides (a missing directory, a directory where the
// file should be) is a transient FAILED: it may be fixed before a retry.
TEST_F(EnsureFileTest, UnwritablePlacesAreTransientFailures) {
  HandlerResult r = Ensure({{"path", Allowed("no/such/dir/f")}, {"content", "x"}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_FALSE(r.permanent);
  EXPECT_NE(r.error.find("directory " + Allowed("no") + " does not exist"), std::string::npos)
      << r.error;

  fs::create_directory(Allowed("d"));
  r = Ensure({{"path", Allowed("d")}, {"content", "x"}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_FALSE(r.permanent);
  EXPECT_NE(r.error.find("is a directory"), std::string::npos) << r.error;

  std::ofstream(Allowed("file")) << "x";
  r = Ensure({{"path", Allowed("file/f")}, {"content", "x"}});
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_NE(r.error.find("is not a directory"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace apollo::agent
