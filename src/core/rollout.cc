#include "core/rollout.h"

#include <algorithm>

namespace apollo {

std::string_view BreachActionName(BreachAction a) {
  return a == BreachAction::kAbort ? "abort" : "pause";
}

std::optional<BreachAction> ParseBreachAction(std::string_view name) {
  if (name == "pause") return BreachAction::kPause;
  if (name == "abort") return BreachAction::kAbort;
  return std::nullopt;
}

namespace {

int BatchSizeOf(const RolloutSpec& r, size_t nodes) {
  if (r.batch_percent > 0) {
    const size_t n = (nodes * static_cast<size_t>(r.batch_percent) + 99) / 100;
    return static_cast<int>(std::max<size_t>(n, 1));
  }
  return std::max(r.batch_size, 1);
}

}  // namespace

std::vector<int> PlanBatches(const RolloutSpec& r, size_t nodes) {
  std::vector<int> batch(nodes, 0);
  const size_t canary = std::min(nodes, static_cast<size_t>(std::max(r.canary, 0)));
  const size_t size = static_cast<size_t>(BatchSizeOf(r, nodes));
  const int first = canary > 0 ? 2 : 1;
  for (size_t i = 0; i < nodes; ++i) {
    batch[i] = i < canary ? 1 : first + static_cast<int>((i - canary) / size);
  }
  return batch;
}

int BatchCount(const RolloutSpec& r, size_t nodes) {
  std::vector<int> b = PlanBatches(r, nodes);
  return b.empty() ? 0 : b.back();
}

int FailureBudget(const RolloutSpec& r, size_t nodes) {
  if (r.max_failures) return *r.max_failures;
  if (r.max_fail_percentage) {
    return static_cast<int>(nodes * static_cast<size_t>(*r.max_fail_percentage) / 100);
  }
  return 0;
}

std::string DescribeBudget(const RolloutSpec& r) {
  if (r.max_failures) return "max_failures " + std::to_string(*r.max_failures);
  if (r.max_fail_percentage) return "max_fail_percentage " + std::to_string(*r.max_fail_percentage);
  return "no failures allowed";
}

namespace {
constexpr std::string_view kRolloutStateNames[] = {
    "running", "waiting", "awaiting_approval", "paused", "aborting", "aborted", "completed"};
}

std::string_view RolloutStateName(RolloutState s) {
  const int i = static_cast<int>(s);
  return i >= 0 && i < 7 ? kRolloutStateNames[i] : "unknown";
}

std::optional<RolloutState> ParseRolloutState(std::string_view name) {
  for (int i = 0; i < 7; ++i) {
    if (kRolloutStateNames[i] == name) return static_cast<RolloutState>(i);
  }
  return std::nullopt;
}

}  // namespace apollo
