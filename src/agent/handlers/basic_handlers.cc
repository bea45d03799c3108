// noop and sleep: the two handlers tests and benchmarks lean on.

#include <algorithm>
#include <cstdio>

#include "agent/handlers/builtin_handlers.h"
#include "agent/handlers/params.h"

namespace apollo::agent {
namespace {

// Longest stretch sleep waits between progress reports and clock checks.
constexpr Duration kSleepSlice = std::chrono::milliseconds(250);
// A week: longer sleeps are surely a typo.
constexpr double kMaxSleepSeconds = 7 * 24 * 3600.0;

class NoopHandler final : public Handler {
 public:
  HandlerResult Run(const HandlerContext&) override {
    return HandlerResult::Succeeded(nlohmann::json::object());
  }
};

// Sleeps on the context's clock, so a ManualClock drives it in tests; it
// wakes at once when the token trips.
class SleepHandler final : public Handler {
 public:
  HandlerResult Run(const HandlerContext& ctx) override {
    Status st = CheckParamsObject("sleep", ctx.params);
    if (!st.ok()) return HandlerResult::Refused(st.message());
    auto seconds = OptionalNumber("sleep", ctx.params, "seconds", 0, kMaxSleepSeconds);
    if (!seconds.ok()) return HandlerResult::Refused(seconds.status().message());
    if (!seconds->has_value()) return HandlerResult::Refused("sleep: params.seconds is required");
    const double total = **seconds;
    const StopCondition stop = ctx.Stop();
    const TimePoint start = ctx.clock->Now();
    const TimePoint end = start + std::chrono::duration_cast<Duration>(
                                      std::chrono::duration<double>(total));
    ctx.ReportProgress(0.0, "sleeping");
    for (TimePoint now = start; now < end; now = ctx.clock->Now()) {
      StopReason reason = stop.WaitFor(std::min<Duration>(end - now, kSleepSlice));
      if (reason != StopReason::kNone) return HandlerResult::Stopped(reason);
      double done = std::chrono::duration<double>(ctx.clock->Now() - start).count();
      char msg[64];
      std::snprintf(msg, sizeof(msg), "slept %.2fs of %.2fs", std::min(done, total), total);
      ctx.ReportProgress(total > 0 ? done / total : 1.0, msg);
    }
    return HandlerResult::Succeeded({{"slept_s", total}});
  }
};

}  // namespace

std::unique_ptr<Handler> NewNoopHandler() { return std::make_unique<NoopHandler>(); }
std::unique_ptr<Handler> NewSleepHandler() { return std::make_unique<SleepHandler>(); }

}  // namespace apollo::agent
