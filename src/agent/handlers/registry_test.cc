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
  if (!handler.ok()) return UnavailableIntentResult(run.ctx.intent, handler.status());
  return RunHandler(**handler, run.ctx);
}

TEST(HandlerRegistryTest, DefaultConfigEnablesEveryBuiltinButExec) {
  auto registry = Registry();
  EXPECT_EQ(registry->Intents(), DefaultEnabledBuiltins());
  EXPECT_EQ(registry->Intents(),
            (std::vector<std::string>{"collect_metrics", "ensure_file", "noop", "sleep"}));
  EXPECT_EQ(registry->DisabledIntents(), std::vector<std::string>{"exec"});
}

TEST(HandlerRegistryTest, DisabledBuiltinIsPermissionDeniedAndAPermanentFailure) {
  auto registry = Registry();
  auto handler = registry->NewHandler("exec");
  EXPECT_EQ(handler.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(handler.status().message(),
            "exec is disabled on this node; enable it with 'enabled_intents' in the agent "
            "config or with edge-agent --enable-intent exec");
  TestRun run("exec", {{"argv", {"true"}}});
  HandlerResult r = RunIntent(*registry, run);
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_TRUE(r.permanent);
  EXPECT_EQ(r.error.rfind("exec is disabled on this node", 0), 0u) << r.error;
  EXPECT_EQ(r.detail["intent"], "exec");
}

TEST(HandlerRegistryTest, UnknownIntentIsNotFoundAndAPermanentFailure) {
  auto registry = Registry();
  auto handler = registry->NewHandler("format_disk");
  EXPECT_EQ(handler.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(handler.status().message(), "unknown intent format_disk");
  HandlerResult r = UnknownIntentResult("format_disk");
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_TRUE(r.permanent);
  EXPECT_EQ(r.error, "unknown intent format_disk");
}

TEST(HandlerRegistryTest, OnlyEnabledIntentsRun) {
  HandlerConfig config;
  config.enabled_builtins = {"noop"};
  config.external = {{"rotate_logs", "/usr/local/lib/apollo/rotate_logs"}};
  auto registry = Registry(config);
  EXPECT_EQ(registry->Intents(), (std::vector<std::string>{"noop", "rotate_logs"}));
  EXPECT_EQ(registry->DisabledIntents(),
            (std::vector<std::string>{"collect_metrics", "ensure_file", "exec", "sleep"}));
  EXPECT_FALSE(registry->Has("exec"));
  EXPECT_EQ(registry->NewHandler("exec").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(registry->NewHandler("rotate").status().code(), StatusCode::kNotFound);
}

TEST(HandlerRegistryTest, EveryBuiltinCanBeEnabled) {
  HandlerConfig config;
  config.enabled_builtins = BuiltinIntentNames();
  auto registry = Registry(config);
  EXPECT_EQ(registry->Intents(), BuiltinIntentNames());
  EXPECT_TRUE(registry->DisabledIntents().empty());
}

// The registry hands each handler the policy of the config.
TEST(HandlerRegistryTest, PoliciesReachTheHandlers) {
  testing::TempDir dir;
  HandlerConfig config;
  config.enabled_builtins = BuiltinIntentNames();
  config.exec.allowed_commands = {"/usr/bin/true"};
  auto registry = Registry(config);
  TestRun touch("exec", {{"argv", {"touch", dir.File("ran")}}});
  HandlerResult r = RunIntent(*registry, touch);
  EXPECT_TRUE(r.permanent) << r.error;
  EXPECT_NE(r.error.find("is not allowed on this node"), std::string::npos) << r.error;
  TestRun write("ensure_file", {{"path", dir.File("f")}, {"content", "x"}});
  r = RunIntent(*registry, write);
  EXPECT_TRUE(r.permanent) << r.error;
  EXPECT_NE(r.error.find("ensure_file.allowed_dirs"), std::string::npos) << r.error;
  EXPECT_TRUE(dir.List().empty());
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
  for (const char* bad : {"bin/x", "/usr/bin/../x", "", "/a/./b"}) {
    HandlerConfig command;
    command.exec.allowed_commands = {bad};
    EXPECT_EQ(HandlerRegistry::Create(command).status().code(), StatusCode::kInvalidArgument)
        << bad;
    HandlerConfig dir;
    dir.ensure_file.allowed_dirs = {bad};
    EXPECT_EQ(HandlerRegistry::Create(dir).status().code(), StatusCode::kInvalidArgument) << bad;
  }
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
    EXPECT_TRUE(r.permanent) << params.dump();
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

TEST(ProgressSinkTest, StampsReportsWithItsClock) {
  ManualClock clock;
  clock.Advance(Duration(5s));
  ProgressSink sink(nullptr, &clock);
  EXPECT_EQ(sink.Latest().at, TimePoint{});
  sink.Report(0.5, "half");
  EXPECT_EQ(sink.Latest().at, clock.Now());
  clock.Advance(Duration(2s));
  EXPECT_NE(sink.Latest().at, clock.Now());
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
