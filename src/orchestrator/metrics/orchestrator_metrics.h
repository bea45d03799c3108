#pragma once

// The orchestrator's event metrics: counters and histograms updated where
// the thing happens (MeteredStore, at each store call), held in a
// prometheus-cpp Registry and written out by Scrape (scrape.h) together
// with the values read at scrape time (tasks by state, nodes, bus lag...).
//
// Why prometheus-cpp (Debian's prometheus-cpp-dev, core library only): it
// is a maintained implementation of exactly the types we need (counter,
// gauge, histogram with fixed buckets, label families) and of the text
// exposition format that `promtool check metrics` checks; its HTTP exposer
// (civetweb) is not used: /metrics is served by our own HTTP server.
//
// No process-wide registry: one OrchestratorMetrics is made in main.cc and
// passed to who needs it.
//
// Thread-safety: every method may be called from any thread (prometheus-cpp
// counters and histograms are atomic; the label cache is guarded by mu_).

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/task_state.h"
#include "store/types.h"

namespace apollo::orchestrator {

// The store writes timed by StoreCall.
enum class StoreOp { kApply = 0, kTransition = 1, kCreate = 2, kHeartbeats = 3 };

class OrchestratorMetrics {
 public:
  OrchestratorMetrics();
  OrchestratorMetrics(const OrchestratorMetrics&) = delete;
  OrchestratorMetrics& operator=(const OrchestratorMetrics&) = delete;

  // One (task, node) row moved `from` (nullopt: created) `to` for `cause`.
  void Transition(std::optional<TaskState> from, TaskState to, store::Cause cause);
  // A store write took `seconds` from call to result.
  void StoreCall(StoreOp op, double seconds);
  // A batch of agent events handed to the store in one ApplyAsync.
  void IngestBatch(size_t events);
  // Per-event outcomes of ingestion (duplicate, stale_attempt, ...).
  void IngestOutcome(store::Outcome outcome);
  // Submit (create) to the row's first RUNNING, and each dispatch to its
  // acknowledgement (the agent's ACCEPTED moving the row on), in seconds.
  void SubmitToRunning(double seconds);
  void DispatchToAck(double seconds);
  // Rows whose latency was not tracked because the tracking maps were full.
  void LatencyUntracked() { latency_untracked_->Increment(); }

  prometheus::Registry& registry() { return *registry_; }

 private:
  prometheus::Counter& TransitionCounter(std::optional<TaskState> from, TaskState to,
                                         store::Cause cause);

  // shared_ptr: prometheus-cpp's Registry API hands one out (Collectable).
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* transitions_;
  prometheus::Family<prometheus::Histogram>* store_seconds_;
  prometheus::Histogram* ingest_batch_;
  prometheus::Family<prometheus::Counter>* ingest_outcomes_;
  std::array<prometheus::Histogram*, 4> store_ops_{};  // by StoreOp
  std::array<prometheus::Counter*, 7> outcomes_{};     // by store::Outcome
  prometheus::Histogram* submit_to_running_;
  prometheus::Histogram* dispatch_to_ack_;
  prometheus::Counter* latency_untracked_;

  // (from + 1, to, cause) -> its counter, made on first use: the families
  // hold only the label sets that happened.
  static constexpr int kCauses = 32;
  using Slot = std::atomic<prometheus::Counter*>;
  std::array<Slot, (kNumTaskStates + 1) * kNumTaskStates * kCauses> transition_slots_{};
  std::mutex mu_;  // serialises making a counter (Family::Add)
};

}  // namespace apollo::orchestrator
