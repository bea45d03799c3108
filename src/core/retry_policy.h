#pragma once

// How long to wait before retry n, and when to stop retrying.
//
// Attempt numbering: attempt 1 is the first execution; retry n is attempt
// n + 1. DelayBeforeRetry(n) is the wait before retry n (n >= 1).
//
// Thread-safety: RetryPolicy is a value; the Rng passed in is the caller's.

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"

namespace apollo {

enum class Backoff { kExponential, kFixed };

std::string_view BackoffName(Backoff b);
std::optional<Backoff> ParseBackoff(std::string_view name);

// Randomness, injected: a UniformRandomBitGenerator producing 64-bit values.
// Production code seeds std::mt19937_64 from the OS; tests pass a fixed seed.
using Rng = std::mt19937_64;

// One tier of retries: up to `max_retries` retries spaced by its own backoff.
struct RetryTier {
  std::string name;  // the preset it came from ("fast", "slow", ...), or ""
  int max_retries = 3;
  std::chrono::seconds initial_interval{5};
  std::chrono::seconds max_interval{60};
  Backoff backoff = Backoff::kExponential;
  bool jitter = false;

  // The delay before the tier's retry `n` (n >= 1), as RetryPolicy's.
  Duration BaseDelay(int n) const;
  Duration DelayBeforeRetry(int n, Rng* rng) const;

  friend bool operator==(const RetryTier&, const RetryTier&) = default;
};

// Either one unnamed tier (the fields below, the seed's form), or `tiers`
// in escalating order (e.g. fast, then slow, then FAILED for a person): a
// task's retries use the first tier until it is spent, then the next.
// With tiers, max_retries is their sum (Tiered() keeps it so) and the other
// single-tier fields are not used.
struct RetryPolicy {
  int max_retries = 3;
  std::chrono::seconds initial_interval{5};
  std::chrono::seconds max_interval{60};
  Backoff backoff = Backoff::kExponential;
  // Full jitter (AWS's "FullJitter"): the delay is uniform in [0, computed].
  // Spreads a burst of failures so they do not retry in lockstep.
  bool jitter = false;
  std::vector<RetryTier> tiers;

  // A policy made of `tiers` (max_retries = their sum).
  static RetryPolicy Tiered(std::vector<RetryTier> tiers);
  // This policy as a tier named `name` (a tiered policy: its first tier).
  RetryTier AsTier(std::string name) const;

  // The seed's tiers. Fast: network blips, 5 s x 3. Slow: a dependency that
  // is down for a while, 60 s x 5. After the slow tier a task stays FAILED
  // and waits for a person.
  static RetryPolicy Fast();
  static RetryPolicy Slow();
  // A preset by name: "fast", "slow", "none".
  static std::optional<RetryPolicy> Preset(std::string_view name);

  // The delay before retry `n` (n >= 1) without jitter:
  //   fixed:       initial_interval
  //   exponential: min(initial_interval * 2^(n-1), max_interval)
  // Never overflows, whatever n is.
  Duration BaseDelay(int n) const;

  // BaseDelay(n), with full jitter drawn from `rng` when `jitter` is set
  // (rng may be null only when jitter is off).
  Duration DelayBeforeRetry(int n, Rng* rng) const;

  // True when `retries_used` retries have been spent and no more are allowed.
  bool Exhausted(int retries_used) const { return retries_used >= max_retries; }

  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

// What to do after an attempt failed or timed out.
struct RetryDecision {
  bool retry = false;    // false: stay FAILED/TIMEOUT for a person
  Duration delay{0};     // wait before the retry, when retry is true
  int retry_number = 0;  // 1 for the first retry, ... (over all tiers)
  std::string tier;      // the tier granting it ("" for an untiered policy)
  int tier_retry = 0;    // its number within that tier
  int tier_retries = 0;  // that tier's max_retries
};

// `retries_used`: retries already granted for this (task, node).
RetryDecision DecideRetry(const RetryPolicy& policy, int retries_used, Rng* rng);

}  // namespace apollo
