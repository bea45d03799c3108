#pragma once

// Retention on its own: every `interval` a round of StateStore::Purge
// calls, each one bounded batch per kind (settled tasks whole, alerts, dead
// letters, audit rows, old dedup entries) in its own short transaction, with
// a pause between calls so the writer serves ingest and dispatch between
// them. A round ends when nothing older than its horizon is left, or after
// max_calls_per_round (the rest waits for the next round).
//
// Thread-safety: Start/Stop from one thread; Totals from any.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/clock.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

struct RetentionRunnerOptions {
  store::RetentionPolicy policy;
  Duration interval = std::chrono::seconds(60);
  Duration pause = std::chrono::milliseconds(20);  // between calls of a round
  int max_calls_per_round = 1000;
  // A line for the log when a round purged something or failed.
  std::function<void(const std::string&)> log;
};

class RetentionRunner {
 public:
  RetentionRunner(RetentionRunnerOptions options, store::StateStore& store);
  ~RetentionRunner();
  RetentionRunner(const RetentionRunner&) = delete;
  RetentionRunner& operator=(const RetentionRunner&) = delete;

  void Start();
  void Stop();

  // One round now, on the caller's thread (tests, the first round).
  Result<store::PurgeStats> RunRound();
  // Everything purged since Start.
  store::PurgeStats Totals() const;

 private:
  void Loop();

  const RetentionRunnerOptions options_;
  store::StateStore& store_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;         // guarded by mu_
  store::PurgeStats totals_;  // guarded by mu_
  std::thread thread_;
};

// "3 tasks, 120 history rows, ..." (the non-zero counts).
std::string DescribePurge(const store::PurgeStats& s);

}  // namespace apollo::orchestrator
