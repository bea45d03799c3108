#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/test_util.h"

namespace apollo::agent {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TempDir;
using testing::TestRun;

HandlerResult Collect(TestRun& run, const std::string& proc = "/proc") {
  auto handler = NewCollectMetricsHandler(proc);
  return RunHandler(*handler, run.ctx);
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

TEST(CollectMetricsTest, ReadsTheRealProc) {
  TestRun run("collect_metrics", {{"sample_ms", 50}});
  HandlerResult r = Collect(run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  const json& m = r.result;
  EXPECT_TRUE(m["load"].contains("1m")) << m.dump();
  EXPECT_GE(m["cpu"]["count"].get<int>(), 1);
  EXPECT_GT(m["memory"]["total_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(m["uptime_s"].get<double>(), 0.0);
  ASSERT_EQ(m["disks"].size(), 1u);
  EXPECT_EQ(m["disks"][0]["path"], "/");
  EXPECT_GT(m["disks"][0]["total_bytes"].get<uint64_t>(), 0u);
  EXPECT_LT(m.dump().size(), 2048u) << "a small result";
}

TEST(CollectMetricsTest, ParsesAKnownProc) {
  TempDir proc;
  Write(proc.File("loadavg"), "1.50 2.50 3.50 1/100 1234\n");
  Write(proc.File("stat"),
        "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\n"
        "cpu1 50 0 50 400 0 0 0 0 0 0\nintr 1 2 3\n");
  Write(proc.File("meminfo"),
        "MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    400 kB\n"
        "SwapTotal:        50 kB\nSwapFree:         20 kB\n");
  Write(proc.File("uptime"), "12345.67 999.00\n");
  TestRun run("collect_metrics", {{"sample_ms", 0}, {"paths", {proc.path(), "/nonexistent"}}});
  HandlerResult r = Collect(run, proc.path());
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  const json& m = r.result;
  EXPECT_EQ(m["load"], json({{"1m", 1.5}, {"5m", 2.5}, {"15m", 3.5}}));
  EXPECT_EQ(m["cpu"]["count"], 2);
  EXPECT_TRUE(m["cpu"]["utilization"].is_null()) << "no ticks between samples";
  EXPECT_EQ(m["memory"]["total_bytes"], 1000 * 1024);
  EXPECT_EQ(m["memory"]["available_bytes"], 400 * 1024);
  EXPECT_EQ(m["memory"]["used_bytes"], 600 * 1024);
  EXPECT_EQ(m["memory"]["swap_free_bytes"], 20 * 1024);
  EXPECT_DOUBLE_EQ(m["uptime_s"].get<double>(), 12345.67);
  EXPECT_EQ(m["disks"][0]["path"], proc.path());
  EXPECT_TRUE(m["disks"][1].contains("error")) << m["disks"][1].dump();
}

TEST(CollectMetricsTest, ConfiguredDefaultPaths) {
  TempDir dir;
  TestRun run("collect_metrics", {{"sample_ms", 0}});
  auto handler = NewCollectMetricsHandler("/proc", {"/", dir.path()});
  HandlerResult r = RunHandler(*handler, run.ctx);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  ASSERT_EQ(r.result["disks"].size(), 2u);
  EXPECT_EQ(r.result["disks"][1]["path"], dir.path());
}

TEST(CollectMetricsTest, MissingProcFilesBecomeErrorsNotFailure) {
  TempDir empty;
  TestRun run("collect_metrics", {{"sample_ms", 0}});
  HandlerResult r = Collect(run, empty.path());
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_TRUE(r.result["load"].contains("error"));
  EXPECT_TRUE(r.result["memory"].contains("error"));
}

TEST(CollectMetricsTest, BadParamsAreFailed) {
  for (json params : {json({{"paths", "/"}}), json({{"paths", {1}}}),
                      json({{"sample_ms", -1}}), json({{"sample_ms", "x"}}), json(3)}) {
    TestRun run("collect_metrics", params);
    HandlerResult r = Collect(run);
    EXPECT_EQ(r.outcome, Outcome::kFailed) << params.dump();
    EXPECT_EQ(r.error.rfind("collect_metrics: params", 0), 0u) << r.error;
  }
}

TEST(CollectMetricsTest, CancelDuringSamplingIsPrompt) {
  TestRun run("collect_metrics", {{"sample_ms", 5000}});
  std::thread canceller([&] {
    std::this_thread::sleep_for(50ms);
    run.token.Cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  HandlerResult r = Collect(run);
  canceller.join();
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

}  // namespace
}  // namespace apollo::agent
