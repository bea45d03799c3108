#include "orchestrator/metrics/orchestrator_metrics.h"

namespace apollo::orchestrator {
namespace {

// Latencies of a local store and of agents on a LAN or WAN: 1 ms .. 1 min.
const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
// A store write: 100 us (SQLite, synchronous=NORMAL) .. 10 s (a stalled disk).
const prometheus::Histogram::BucketBoundaries kStoreBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 10};
// Events per ApplyAsync: 1 .. store_options.batch_max (at most 100000).
const prometheus::Histogram::BucketBoundaries kBatchBuckets = {1,   2,   4,   8,    16,   32,  64,
                                                               128, 256, 512, 1000, 2000, 5000};

}  // namespace

OrchestratorMetrics::OrchestratorMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  transitions_ = &prometheus::BuildCounter()
                      .Name("apollo_transitions_total")
                      .Help(
                          "(task, node) row state changes committed, by from/to state and "
                          "cause (from=\"NONE\": the row was created)")
                      .Register(*registry_);
  store_seconds_ = &prometheus::BuildHistogram()
                        .Name("apollo_store_commit_seconds")
                        .Help(
                            "Store writes from call to committed result, by op (apply: an "
                            "ingest batch, until its caller collected the result)")
                        .Register(*registry_);
  ingest_batch_ = &prometheus::BuildHistogram()
                       .Name("apollo_ingest_batch_events")
                       .Help("Agent events per store apply (one ingest batch)")
                       .Register(*registry_)
                       .Add({}, kBatchBuckets);
  ingest_outcomes_ = &prometheus::BuildCounter()
                          .Name("apollo_ingest_events_total")
                          .Help("Agent events the store was given, by outcome")
                          .Register(*registry_);
  submit_to_running_ = &prometheus::BuildHistogram()
                            .Name("apollo_submit_to_running_seconds")
                            .Help("From a (task, node) row's creation to its first RUNNING")
                            .Register(*registry_)
                            .Add({}, kLatencyBuckets);
  dispatch_to_ack_ = &prometheus::BuildHistogram()
                          .Name("apollo_dispatch_to_ack_seconds")
                          .Help("From each dispatch of a row to the agent's acknowledgement")
                          .Register(*registry_)
                          .Add({}, kLatencyBuckets);
  for (size_t i = 0; i < store_ops_.size(); ++i) {
    static constexpr std::array<const char*, 4> kOps = {"apply", "transition", "create",
                                                        "heartbeats"};
    store_ops_[i] = &store_seconds_->Add({{"op", kOps[i]}}, kStoreBuckets);
  }
  for (size_t i = 0; i < outcomes_.size(); ++i) {
    outcomes_[i] = &ingest_outcomes_->Add(
        {{"outcome", std::string(store::OutcomeName(static_cast<store::Outcome>(i)))}});
  }
  latency_untracked_ = &prometheus::BuildCounter()
                            .Name("apollo_latency_untracked_total")
                            .Help("Rows left out of the latency histograms (tracking table full)")
                            .Register(*registry_)
                            .Add({});
}

prometheus::Counter& OrchestratorMetrics::TransitionCounter(std::optional<TaskState> from,
                                                            TaskState to, store::Cause cause) {
  const int f = from ? static_cast<int>(*from) + 1 : 0;
  const int c = static_cast<int>(cause);
  const size_t i = (static_cast<size_t>(f) * kNumTaskStates + static_cast<size_t>(to)) * kCauses +
                   static_cast<size_t>(c >= 0 && c < kCauses ? c : 0);
  if (prometheus::Counter* counter = transition_slots_[i].load(std::memory_order_acquire)) {
    return *counter;
  }
  std::lock_guard<std::mutex> lock(mu_);
  prometheus::Counter* counter = transition_slots_[i].load(std::memory_order_relaxed);
  if (!counter) {
    counter = &transitions_->Add({{"from", from ? std::string(TaskStateName(*from)) : "NONE"},
                                  {"to", std::string(TaskStateName(to))},
                                  {"cause", std::string(store::CauseName(cause))}});
    transition_slots_[i].store(counter, std::memory_order_release);
  }
  return *counter;
}

void OrchestratorMetrics::Transition(std::optional<TaskState> from, TaskState to,
                                     store::Cause cause) {
  TransitionCounter(from, to, cause).Increment();
}

void OrchestratorMetrics::StoreCall(StoreOp op, double seconds) {
  store_ops_[static_cast<size_t>(op)]->Observe(seconds);
}

void OrchestratorMetrics::IngestBatch(size_t events) {
  ingest_batch_->Observe(static_cast<double>(events));
}

void OrchestratorMetrics::IngestOutcome(store::Outcome outcome) {
  const auto i = static_cast<size_t>(outcome);
  if (i < outcomes_.size()) outcomes_[i]->Increment();
}

void OrchestratorMetrics::SubmitToRunning(double seconds) { submit_to_running_->Observe(seconds); }

void OrchestratorMetrics::DispatchToAck(double seconds) { dispatch_to_ack_->Observe(seconds); }

}  // namespace apollo::orchestrator
