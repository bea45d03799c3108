#include <gtest/gtest.h>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/test_util.h"

namespace apollo::agent {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TempDir;
using testing::TestRun;
using testing::WriteExecutable;

class ExternalHandlerTest : public ::testing::Test {
 protected:
  HandlerResult Run(const std::string& script, TestRun& run, ProcessOptions options = {}) {
    const std::string path = dir_.File("handler.sh");
    WriteExecutable(path, "#!/bin/sh\n" + script);
    auto handler = NewExternalHandler(path, options);
    return RunHandler(*handler, run.ctx);
  }
  TempDir dir_;
};

TEST_F(ExternalHandlerTest, ProgressLinesAndResult) {
  TestRun run("upgrade_service", {{"version", "2.0"}});
  HandlerResult r = Run(R"(input=$(cat)
echo "starting, not json"
echo '{"progress": 0.4, "message": "downloading"}'
echo '[1, 2]'
echo '{"progress": 0.9, "message": "restarting"}'
echo "{\"result\": {\"env\": \"$APOLLO_TASK_ID/$APOLLO_ATTEMPT/$APOLLO_NODE_ID/$APOLLO_INTENT\", \"input\": $input}}"
)", run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error << r.detail.dump();
  EXPECT_EQ(r.result["env"], "task-42/3/node-7/upgrade_service");
  const json& input = r.result["input"];
  EXPECT_EQ(input["task_id"], "task-42");
  EXPECT_EQ(input["attempt"], 3);
  EXPECT_EQ(input["node_id"], "node-7");
  EXPECT_EQ(input["intent"], "upgrade_service");
  EXPECT_EQ(input["params"], json({{"version", "2.0"}}));
  EXPECT_EQ(input["metadata"], json({{"owner", "tests"}}));

  auto reports = run.Reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_DOUBLE_EQ(reports[0].fraction, 0.4);
  EXPECT_EQ(reports[0].message, "downloading");
  EXPECT_EQ(run.progress.Latest().message, "restarting");
}

TEST_F(ExternalHandlerTest, NoResultLineMeansEmptyResult) {
  TestRun run("rotate_logs");
  HandlerResult r = Run("cat >/dev/null; echo hello\n", run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result, json::object());
}

TEST_F(ExternalHandlerTest, NonZeroExitIsFailedWithStderrTail) {
  TestRun run("rotate_logs");
  HandlerResult r = Run("echo '{\"result\": {\"x\": 1}}'; echo 'disk full' >&2; exit 2\n", run);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.error, "rotate_logs: exited with code 2: disk full");
  EXPECT_EQ(r.detail["stderr_tail"], "disk full\n");
  EXPECT_EQ(r.detail["exit_code"], 2);
}

TEST_F(ExternalHandlerTest, GarbageOutputNeverCrashes) {
  TestRun run("noisy");
  HandlerResult r = Run(R"(head -c 3000000 /dev/urandom
echo
echo '{"progress": "x"}'
echo '{"progress": 1e999}'
echo '{"result": '
echo '{"result": [1,2,3]}'
)", run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result, json({1, 2, 3}));
  EXPECT_NO_THROW((void)r.detail.dump());
}

TEST_F(ExternalHandlerTest, TimeoutStopsIt) {
  TestRun run("slow");
  run.SetTimeout(300ms);
  HandlerResult r = Run("exec sleep 100\n", run);
  EXPECT_EQ(r.outcome, Outcome::kTimeout);
}

TEST_F(ExternalHandlerTest, MissingExecutableIsFailed) {
  TestRun run("ghost");
  auto handler = NewExternalHandler(dir_.File("does-not-exist"), {});
  HandlerResult r = RunHandler(*handler, run.ctx);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_NE(r.error.find("ghost: cannot run"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace apollo::agent
