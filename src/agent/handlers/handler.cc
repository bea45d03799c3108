#include "agent/handlers/handler.h"

#include <algorithm>
#include <cmath>
#include <exception>

namespace apollo::agent {

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSucceeded: return "SUCCEEDED";
    case Outcome::kFailed: return "FAILED";
    case Outcome::kCancelled: return "CANCELLED";
    case Outcome::kTimeout: return "TIMEOUT";
  }
  return "UNKNOWN";
}

HandlerResult HandlerResult::Succeeded(nlohmann::json result) {
  HandlerResult r;
  r.outcome = Outcome::kSucceeded;
  r.result = std::move(result);
  return r;
}

HandlerResult HandlerResult::Failed(std::string error, nlohmann::json detail) {
  HandlerResult r;
  r.outcome = Outcome::kFailed;
  r.error = std::move(error);
  r.detail = std::move(detail);
  return r;
}

HandlerResult HandlerResult::Refused(std::string error, nlohmann::json detail) {
  HandlerResult r = Failed(std::move(error), std::move(detail));
  r.permanent = true;
  return r;
}

HandlerResult HandlerResult::Stopped(StopReason reason, nlohmann::json detail) {
  HandlerResult r;
  r.outcome = reason == StopReason::kTimeout ? Outcome::kTimeout : Outcome::kCancelled;
  r.error = reason == StopReason::kTimeout ? "timed out" : "cancelled";
  r.detail = std::move(detail);
  return r;
}

void ProgressSink::Report(double fraction, std::string message) {
  if (std::isnan(fraction)) fraction = 0.0;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const TimePoint at = clock_ != nullptr ? clock_->Now() : TimePoint{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    latest_.fraction = fraction;
    latest_.message = message;
    latest_.at = at;
  }
  if (callback_) callback_(fraction, std::move(message));
}

Progress ProgressSink::Latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_;
}

std::map<std::string, std::string> HandlerContext::ApolloEnv() const {
  return {{"APOLLO_TASK_ID", task_id},
          {"APOLLO_ATTEMPT", std::to_string(attempt)},
          {"APOLLO_NODE_ID", node_id},
          {"APOLLO_INTENT", intent}};
}

HandlerResult RunHandler(Handler& handler, const HandlerContext& ctx) {
  if (ctx.clock == nullptr || ctx.cancel == nullptr) {
    return HandlerResult::Failed("internal error: handler context lacks clock or cancel token");
  }
  StopReason before = ctx.Stop().Check();
  if (before != StopReason::kNone) return HandlerResult::Stopped(before);
  try {
    return handler.Run(ctx);
  } catch (const std::exception& e) {
    return HandlerResult::Failed(std::string("internal error: ") + e.what());
  } catch (...) {
    return HandlerResult::Failed("internal error: unknown exception");
  }
}

}  // namespace apollo::agent
