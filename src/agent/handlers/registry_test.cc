#include "agent/handlers/registry.h"

#include <atomic>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "agent/handlers/test_util.h"

namespace apollo::agent {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TestRun;

std::unique_ptr<HandlerRegistry> Registry(const HandlerConfig& config = {}) {
  auto r = HandlerRegistry::Create(config);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

HandlerResult RunIntent(const HandlerRegistry& registry, TestRun& run) {
  auto handler = registry.NewHandler(run.ctx.intent);
  if (!handler.ok()) return UnknownIntentResult(run.ctx.intent);
  return RunHandler(**handler, run.ctx);
}

TEST(HandlerRegistryTest, DefaultConfigEnablesEveryBuiltin) {
  auto registry = Registry();
  EXPECT_EQ(registry->Intents(), BuiltinIntentNames());
}

TEST(HandlerRegistryTest, UnknownIntentIsNotFoundAndFailed) {
  auto registry = Registry();
  auto handler = registry->NewHandler("format_disk");
  EXPECT_EQ(handler.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(handler.status().message(), "unknown intent format_disk");
  HandlerResult r = UnknownIntentResult("format_disk");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.error, "unknown intent format_disk");
}

TEST(HandlerRegistryTest, OnlyEnabledIntentsRun) {
  HandlerConfig config;
  config.enabled_builtins = {"noop"};
  config.external = {{"rotate_logs", "/usr/local/lib/apollo/rotate_logs"}};
  auto registry = Registry(config);
  EXPECT_EQ(registry->Intents(), (std::vector<std::string>{"noop", "rotate_logs"}));
  EXPECT_FALSE(registry->Has("exec"));
  EXPECT_EQ(registry->NewHandler("exec").status().code(), StatusCode::kNotFound);
}

TEST(HandlerRegistryTest, BadConfigIsRejected) {
  HandlerConfig unknown;
  unknown.enabled_builtins = {"noop", "teleport"};
  EXPECT_EQ(HandlerRegistry::Create(unknown).status().code(), StatusCode::kInvalidArgument);
  HandlerConfig clash;
  clash.external = {{"exec", "/bin/true"}};
  EXPECT_EQ(HandlerRegistry::Create(clash).status().code(), StatusCode::kInvalidArgument);
  HandlerConfig relative;
  relative.external = {{"x", "bin/x"}};
  EXPECT_EQ(HandlerRegistry::Create(relative).status().code(), StatusCode::kInvalidArgument);
  HandlerRegistry registry;
  EXPECT_TRUE(registry.Register("a", [] { return NewNoopHandler(); }).ok());
  EXPECT_EQ(registry.Register("a", [] { return NewNoopHandler(); }).code(),
            StatusCode::kAlreadyExists);
}

TEST(BasicHandlersTest, NoopSucceedsWithEmptyResult) {
  TestRun run("noop");
  HandlerResult r = RunIntent(*Registry(), run);
  EXPECT_EQ(r.outcome, Outcome::kSucceeded);
  EXPECT_EQ(r.result, json::object());
}

TEST(BasicHandlersTest, SleepSucceedsAndReportsProgress) {
  TestRun run("sleep", {{"seconds", 0.3}});
  HandlerResult r = RunIntent(*Registry(), run);
  ASSERT_EQ(r.outcome, Outcome::kSucceeded) << r.error;
  EXPECT_EQ(r.result["slept_s"], 0.3);
  EXPECT_GE(run.Reports().size(), 2u);
  EXPECT_GT(run.progress.Latest().fraction, 0.5);
}

TEST(BasicHandlersTest, ProgressCanBeQueriedWhileRunning) {
  TestRun run("sleep", {{"seconds", 0.8}});
  std::atomic<bool> seen_midway{false};
  std::thread querier([&] {
    seen_midway = testing::WaitUntil([&] {
      Progress p = run.progress.Latest();
      return p.fraction > 0.1 && p.fraction < 1.0 && !p.message.empty();
    }, 5s);
  });
  HandlerResult r = RunIntent(*Registry(), run);
  querier.join();
  EXPECT_EQ(r.outcome, Outcome::kSucceeded);
  EXPECT_TRUE(seen_midway);
}

TEST(BasicHandlersTest, SleepBadParams) {
  for (json params : {json::object(), json({{"seconds", -1}}), json({{"seconds", "1"}}),
                      json({{"seconds", 1e12}})}) {
    TestRun run("sleep", params);
    HandlerResult r = RunIntent(*Registry(), run);
    EXPECT_EQ(r.outcome, Outcome::kFailed) << params.dump();
    EXPECT_EQ(r.error.rfind("sleep: params.seconds", 0), 0u) << r.error;
  }
}

TEST(BasicHandlersTest, SleepHonoursCancelPromptly) {
  TestRun run("sleep", {{"seconds", 100}});
  std::thread canceller([&] {
    std::this_thread::sleep_for(50ms);
    run.token.Cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  HandlerResult r = RunIntent(*Registry(), run);
  canceller.join();
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST(BasicHandlersTest, SleepTimesOutOnAManualClock) {
  ManualClock clock;
  TestRun run("sleep", {{"seconds", 100}}, &clock);
  run.SetTimeout(Duration(10s));
  std::thread advancer([&] {
    std::this_thread::sleep_for(20ms);
    clock.Advance(Duration(11s));
  });
  HandlerResult r = RunIntent(*Registry(), run);
  advancer.join();
  EXPECT_EQ(r.outcome, Outcome::kTimeout);
  EXPECT_EQ(run.token.reason(), StopReason::kTimeout);
}

TEST(BasicHandlersTest, SleepFollowsTheInjectedClock) {
  ManualClock clock;
  TestRun run("sleep", {{"seconds", 3600}}, &clock);
  std::thread advancer([&] {
    std::this_thread::sleep_for(20ms);
    clock.Advance(Duration(3601s));
  });
  const auto start = std::chrono::steady_clock::now();
  HandlerResult r = RunIntent(*Registry(), run);
  advancer.join();
  EXPECT_EQ(r.outcome, Outcome::kSucceeded);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

class ThrowingHandler final : public Handler {
 public:
  HandlerResult Run(const HandlerContext&) override { throw std::runtime_error("boom"); }
};

TEST(RunHandlerTest, ExceptionsBecomeFailed) {
  TestRun run("x");
  ThrowingHandler handler;
  HandlerResult r = RunHandler(handler, run.ctx);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_EQ(r.error, "internal error: boom");
}

TEST(RunHandlerTest, AlreadyStoppedRunsNothing) {
  TestRun run("x");
  run.token.Timeout();
  run.token.Cancel();  // the first reason wins
  ThrowingHandler handler;
  EXPECT_EQ(RunHandler(handler, run.ctx).outcome, Outcome::kTimeout);
  run.ctx.cancel = nullptr;
  EXPECT_EQ(RunHandler(handler, run.ctx).outcome, Outcome::kFailed);
}

TEST(ProgressSinkTest, KeepsLatestAndClamps) {
  std::vector<double> seen;
  ProgressSink sink([&](double f, std::string) { seen.push_back(f); });
  sink.Report(1.7, "over");
  sink.Report(-1, "under");
  sink.Report(0.25, "quarter");
  EXPECT_EQ(seen, (std::vector<double>{1.0, 0.0, 0.25}));
  EXPECT_EQ(sink.Latest().message, "quarter");
}

}  // namespace
}  // namespace apollo::agent
