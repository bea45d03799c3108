#pragma once

// MetricsScraper: the body of GET /metrics, in the Prometheus text format
// (version 0.0.4). It joins the event metrics (OrchestratorMetrics: counted
// where things happen) with values read at scrape time from their owners:
//
//   apollo_tasks{state}                 tasks by roll-up state (store)
//   apollo_nodes{liveness}              nodes by liveness (store + clock)
//   apollo_sessions_connected           agent sessions open now
//   apollo_sessions_{admitted,refused}_total, apollo_admission_window,
//   apollo_admission_handshakes         admission control (admission.h)
//   apollo_event_batches_committing     agent EventBatches read, not yet committed
//   apollo_intent_messages_{offered,sent}_total, apollo_intents_sent_total,
//   apollo_intent_messages_held_total{why}  (session_traffic.h)
//   apollo_breaker_state{intent,state}  1 for each intent's breaker state
//   apollo_queue_depth / _capacity / _paused, apollo_queue_fill_ratio
//   apollo_retry_budget_tokens, apollo_retry_budget_{taken,refused}_total
//   apollo_bus_pending_events{partition}, apollo_bus_oldest_pending_seconds,
//   apollo_bus_{published,applied,dead_lettered}_events_total{partition}
//   apollo_dead_letters                 letters parked now (store)
//   apollo_alerts_total{kind}           alert rows seen in the store
//   apollo_store_commits_total, apollo_build_info{version}
//
// Scrape cost: tasks by state pages through the store's task list (1000 a
// page, at most kMaxTaskPages pages per state: above that the gauge stops
// at the bound, and apollo_tasks_truncated says so); alerts are read
// incrementally (a cursor kept here).
//
// Thread-safety: Scrape may be called from any thread; the alert cursor is
// guarded by mu_ (concurrent scrapes take turns).

#include <map>
#include <mutex>
#include <string>

#include "bus/event_bus.h"
#include "core/clock.h"
#include "orchestrator/metrics/orchestrator_metrics.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/session_traffic.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

class MetricsScraper {
 public:
  static constexpr int kMaxTaskPages = 200;
  static constexpr int kMaxAlertPages = 20;

  // Every reference must outlive the scraper; `bus` and `traffic` may be null.
  MetricsScraper(OrchestratorMetrics& metrics, store::StateStore& store,
                 const Orchestrator& orchestrator, bus::EventBus* bus, const Clock& clock,
                 const SessionTraffic* traffic = nullptr)
      : metrics_(metrics),
        store_(store),
        orchestrator_(orchestrator),
        bus_(bus),
        clock_(clock),
        traffic_(traffic) {}

  // The exposition text. A store or bus read that fails leaves its metrics
  // out and sets apollo_scrape_errors{source} (the scrape itself succeeds:
  // the rest is still worth having).
  std::string Scrape();

 private:
  std::mutex mu_;
  int64_t alerts_seen_up_to_ = 0;               // guarded by mu_
  std::map<std::string, int64_t> alert_kinds_;  // guarded by mu_

  OrchestratorMetrics& metrics_;
  store::StateStore& store_;
  const Orchestrator& orchestrator_;
  bus::EventBus* bus_;
  const Clock& clock_;
  const SessionTraffic* traffic_;
};

}  // namespace apollo::orchestrator
