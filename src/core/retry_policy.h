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
#include <string_view>

#include "core/clock.h"

namespace apollo {

enum class Backoff { kExponential, kFixed };

std::string_view BackoffName(Backoff b);
std::optional<Backoff> ParseBackoff(std::string_view name);

// Randomness, injected: a UniformRandomBitGenerator producing 64-bit values.
// Production code seeds std::mt19937_64 from the OS; tests pass a fixed seed.
using Rng = std::mt19937_64;

struct RetryPolicy {
  int max_retries = 3;
  std::chrono::seconds initial_interval{5};
  std::chrono::seconds max_interval{60};
  Backoff backoff = Backoff::kExponential;
  // Full jitter (AWS's "FullJitter"): the delay is uniform in [0, computed].
  // Spreads a burst of failures so they do not retry in lockstep.
  bool jitter = false;

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
  int retry_number = 0;  // 1 for the first retry, ...
};

// `retries_used`: retries already granted for this (task, node).
RetryDecision DecideRetry(const RetryPolicy& policy, int retries_used, Rng* rng);

}  // namespace apollo
