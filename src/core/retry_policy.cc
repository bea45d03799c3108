#include "core/retry_policy.h"

#include <algorithm>

namespace apollo {

std::string_view BackoffName(Backoff b) {
  return b == Backoff::kFixed ? "fixed" : "exponential";
}

std::optional<Backoff> ParseBackoff(std::string_view name) {
  if (name == "exponential") return Backoff::kExponential;
  if (name == "fixed") return Backoff::kFixed;
  return std::nullopt;
}

RetryPolicy RetryPolicy::Fast() {
  return RetryPolicy{3, std::chrono::seconds(5), std::chrono::seconds(5), Backoff::kFixed, false};
}

RetryPolicy RetryPolicy::Slow() {
  return RetryPolicy{5, std::chrono::seconds(60), std::chrono::seconds(60), Backoff::kFixed, false};
}

std::optional<RetryPolicy> RetryPolicy::Preset(std::string_view name) {
  if (name == "fast") return Fast();
  if (name == "slow") return Slow();
  if (name == "none") {
    return RetryPolicy{0, std::chrono::seconds(0), std::chrono::seconds(0), Backoff::kFixed, false};
  }
  return std::nullopt;
}

Duration RetryPolicy::BaseDelay(int n) const {
  const Duration initial = initial_interval;
  const Duration cap = std::max(max_interval, initial_interval);
  if (backoff == Backoff::kFixed || n <= 1) return std::min(initial, cap);
  // Doubling past the cap is pointless; stop as soon as we reach it, which
  // also keeps the arithmetic far from overflow for any n.
  Duration d = initial;
  for (int i = 1; i < n && d < cap; ++i) {
    if (d.count() == 0) break;
    d *= 2;
  }
  return std::min(d, cap);
}

Duration RetryPolicy::DelayBeforeRetry(int n, Rng* rng) const {
  Duration base = BaseDelay(n);
  if (!jitter || rng == nullptr || base.count() <= 0) return base;
  std::uniform_int_distribution<int64_t> dist(0, base.count());
  return Duration(dist(*rng));
}

RetryDecision DecideRetry(const RetryPolicy& policy, int retries_used, Rng* rng) {
  if (policy.Exhausted(retries_used)) return {};
  int n = retries_used + 1;
  return RetryDecision{true, policy.DelayBeforeRetry(n, rng), n};
}

}  // namespace apollo
