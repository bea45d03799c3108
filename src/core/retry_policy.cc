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
  return RetryPolicy{3, std::chrono::seconds(5), std::chrono::seconds(5), Backoff::kFixed, false, {}};
}

RetryPolicy RetryPolicy::Slow() {
  return RetryPolicy{5, std::chrono::seconds(60), std::chrono::seconds(60), Backoff::kFixed, false, {}};
}

std::optional<RetryPolicy> RetryPolicy::Preset(std::string_view name) {
  if (name == "fast") return Fast();
  if (name == "slow") return Slow();
  if (name == "none") {
    return RetryPolicy{0, std::chrono::seconds(0), std::chrono::seconds(0), Backoff::kFixed, false, {}};
  }
  return std::nullopt;
}

namespace {

Duration Base(std::chrono::seconds initial_interval, std::chrono::seconds max_interval,
              Backoff backoff, int n) {
  const Duration initial = initial_interval;
  const Duration cap = std::max<Duration>(max_interval, initial_interval);
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

Duration Jittered(Duration base, bool jitter, Rng* rng) {
  if (!jitter || rng == nullptr || base.count() <= 0) return base;
  std::uniform_int_distribution<int64_t> dist(0, base.count());
  return Duration(dist(*rng));
}

}  // namespace

Duration RetryTier::BaseDelay(int n) const {
  return Base(initial_interval, max_interval, backoff, n);
}

Duration RetryTier::DelayBeforeRetry(int n, Rng* rng) const {
  return Jittered(BaseDelay(n), jitter, rng);
}

RetryPolicy RetryPolicy::Tiered(std::vector<RetryTier> tiers) {
  RetryPolicy p;
  p.max_retries = 0;
  for (const RetryTier& t : tiers) p.max_retries += t.max_retries;
  p.tiers = std::move(tiers);
  return p;
}

RetryTier RetryPolicy::AsTier(std::string name) const {
  if (!tiers.empty()) {
    RetryTier t = tiers.front();
    t.name = std::move(name);
    return t;
  }
  return RetryTier{std::move(name), max_retries, initial_interval, max_interval, backoff, jitter};
}

Duration RetryPolicy::BaseDelay(int n) const {
  return Base(initial_interval, max_interval, backoff, n);
}

Duration RetryPolicy::DelayBeforeRetry(int n, Rng* rng) const {
  return Jittered(BaseDelay(n), jitter, rng);
}

RetryDecision DecideRetry(const RetryPolicy& policy, int retries_used, Rng* rng) {
  if (policy.Exhausted(retries_used)) return {};
  const int n = retries_used + 1;
  if (policy.tiers.empty()) {
    return RetryDecision{true, policy.DelayBeforeRetry(n, rng), n, "", n, policy.max_retries};
  }
  int before = 0;  // retries of the tiers already spent
  for (const RetryTier& t : policy.tiers) {
    if (n <= before + t.max_retries) {
      int k = n - before;
      return RetryDecision{true, t.DelayBeforeRetry(k, rng), n, t.name, k, t.max_retries};
    }
    before += t.max_retries;
  }
  return {};
}

}  // namespace apollo
