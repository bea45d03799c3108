#include "orchestrator/metrics/scrape.h"

#include <prometheus/text_serializer.h>

#include "core/metric_families.h"
#include "core/version.h"

namespace apollo::orchestrator {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::string MetricsScraper::Scrape() {
  MetricFamilies f;
  std::map<std::string, int> errors;  // source -> 1
  f.Family("apollo_build_info", MetricType::Gauge, "Always 1; the release in its label");
  f.Add(1, {{"version", kVersion}});

  // Tasks by state: one paged count per state.
  std::map<TaskState, int64_t> tasks;
  bool truncated = false;
  for (TaskState s : kAllTaskStates) {
    store::TaskQuery q;
    q.status = s;
    q.limit = 1000;
    int pages = 0;
    for (; pages < kMaxTaskPages; ++pages) {
      auto page = store_.ListTasks(q);
      if (!page.ok()) {
        errors["store"] = 1;
        break;
      }
      tasks[s] += static_cast<int64_t>(page->tasks.size());
      if (page->next_page_token.empty()) break;
      q.page_token = page->next_page_token;
    }
    truncated = truncated || pages == kMaxTaskPages;
  }
  if (!errors.count("store")) {
    f.Family("apollo_tasks", MetricType::Gauge, "Tasks in the store by roll-up state");
    for (TaskState s : kAllTaskStates)
      f.Add(static_cast<double>(tasks[s]), {{"state", std::string(TaskStateName(s))}});
    f.Gauge("apollo_tasks_truncated",
            "1 when a state had more tasks than one scrape counts (apollo_tasks is a lower bound)",
            truncated ? 1 : 0);
  }

  // Nodes by liveness, and the sessions open now.
  if (auto nodes = store_.ListNodes(); nodes.ok()) {
    std::map<Liveness, int> by;
    for (const store::NodeInfo& n : *nodes) ++by[orchestrator_.NodeLiveness(n)];
    f.Family("apollo_nodes", MetricType::Gauge, "Known nodes by liveness");
    for (Liveness l :
         {Liveness::kAlive, Liveness::kSuspect, Liveness::kLost, Liveness::kNeverSeen}) {
      f.Add(by[l], {{"liveness", std::string(LivenessName(l))}});
    }
  } else {
    errors["store"] = 1;
  }
  f.Gauge("apollo_sessions_connected", "Agent sessions open now",
          static_cast<double>(orchestrator_.memo_sizes().sessions));
  const AdmissionCounts admission = orchestrator_.admission_counts();
  f.Counter("apollo_sessions_admitted_total", "Agent Hellos admission control let in",
            static_cast<double>(admission.admitted));
  f.Counter("apollo_sessions_refused_total",
            "Agent Hellos refused with a retry-after (admission control: a reconnect storm)",
            static_cast<double>(admission.refused));
  f.Gauge("apollo_admission_window", "Session handshakes admission control allows at once now",
          static_cast<double>(admission.window));
  f.Gauge("apollo_admission_handshakes", "Sessions admitted and not yet reconciled",
          static_cast<double>(admission.in_flight));
  if (traffic_ != nullptr) {
    f.Gauge("apollo_event_batches_committing",
            "Agent event batches read and not yet committed (limits.busy_batches: busy)",
            static_cast<double>(traffic_->batches_committing()));
    const SessionTraffic::Counts c = traffic_->counts();
    f.Counter("apollo_intent_messages_offered_total",
              "Intent messages the dispatcher handed to agent sessions",
              static_cast<double>(c.offered));
    f.Family("apollo_intent_messages_held_total", MetricType::Counter,
             "Intent messages that waited to go with others: the agent had not answered, "
             "or the center was busy");
    f.Add(static_cast<double>(c.held_unanswered), {{"why", "unanswered"}});
    f.Add(static_cast<double>(c.held_busy), {{"why", "busy"}});
    f.Counter("apollo_intent_messages_sent_total", "Intent messages written to agents",
              static_cast<double>(c.sent));
    f.Counter("apollo_intents_sent_total", "Intents those messages carried",
              static_cast<double>(c.intents_sent));
  }

  // Overload controls.
  auto breakers = orchestrator_.Breakers();
  f.Family("apollo_breaker_state", MetricType::Gauge,
           "1 for the state each intent's circuit breaker is in");
  for (const BreakerInfo& b : breakers) {
    for (BreakerState s : {BreakerState::kClosed, BreakerState::kOpen, BreakerState::kHalfOpen}) {
      f.Add(b.state == s ? 1 : 0,
            {{"intent", b.intent}, {"state", std::string(BreakerStateName(s))}});
    }
  }
  f.Family("apollo_breaker_opened_total", MetricType::Counter,
           "Times each intent's breaker opened since the orchestrator started");
  for (const BreakerInfo& b : breakers)
    f.Add(static_cast<double>(b.times_opened), {{"intent", b.intent}});
  const double depth = static_cast<double>(orchestrator_.QueueDepth());
  const double capacity = static_cast<double>(orchestrator_.QueueCapacity());
  f.Gauge("apollo_queue_depth", "Rows waiting to be run or acknowledged (the dispatch queue)",
          depth);
  f.Gauge("apollo_queue_capacity", "The dispatch queue's capacity (queue.capacity)", capacity);
  f.Gauge("apollo_queue_fill_ratio", "apollo_queue_depth / apollo_queue_capacity",
          capacity > 0 ? depth / capacity : 0);
  f.Gauge("apollo_queue_paused", "1 while new submissions are refused (queue.pause_at)",
          orchestrator_.QueuePaused() ? 1 : 0);
  const TokenBucket& budget = orchestrator_.retry_budget();
  f.Gauge("apollo_retry_budget_tokens", "Re-dispatch tokens left in the retry budget",
          budget.tokens(clock_.Now()));
  f.Counter("apollo_retry_budget_taken_total", "Re-dispatches the retry budget allowed",
            static_cast<double>(budget.taken()));
  f.Counter("apollo_retry_budget_refused_total", "Re-dispatches the retry budget held back",
            static_cast<double>(budget.refused()));

  // The event bus, per partition.
  if (bus_) {
    if (auto lag = bus_->Lag(); lag.ok()) {
      auto per_partition = [&](const std::string& name, MetricType type, const std::string& help,
                               auto value) {
        f.Family(name, type, help);
        for (const bus::PartitionLag& p : *lag) {
          f.Add(static_cast<double>(value(p)), {{"partition", std::to_string(p.partition)}});
        }
      };
      per_partition("apollo_bus_pending_events", MetricType::Gauge,
                    "Events published and not yet applied",
                    [](const auto& p) { return p.pending; });
      per_partition("apollo_bus_oldest_pending_seconds", MetricType::Gauge,
                    "Age of the oldest event not yet applied (0: none)",
                    [](const auto& p) { return Seconds(p.oldest_unapplied_age); });
      per_partition("apollo_bus_published_events_total", MetricType::Counter,
                    "Events accepted into the partition",
                    [](const auto& p) { return p.published; });
      per_partition("apollo_bus_applied_events_total", MetricType::Counter,
                    "Events committed or dead-lettered", [](const auto& p) { return p.applied; });
      per_partition("apollo_bus_dead_lettered_events_total", MetricType::Counter,
                    "Events parked as dead letters", [](const auto& p) { return p.dead_lettered; });
    } else {
      errors["bus"] = 1;
    }
  }

  // Dead letters parked now.
  int64_t letters = 0;
  bool letters_ok = true;
  for (int64_t after = 0, pages = 0; pages < kMaxTaskPages; ++pages) {
    auto page = store_.ListDeadLetters(after, 1000);
    if (!page.ok()) {
      letters_ok = false;
      errors["store"] = 1;
      break;
    }
    letters += static_cast<int64_t>(page->size());
    if (page->size() < 1000) break;
    after = page->back().id;
  }
  if (letters_ok) f.Gauge("apollo_dead_letters", "Dead letters parked in the store", letters);

  // Alert rows by kind, read on from the last scrape's cursor.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int pages = 0; pages < kMaxAlertPages; ++pages) {
      auto page = store_.ListAlerts(alerts_seen_up_to_, 1000);
      if (!page.ok()) {
        errors["store"] = 1;
        break;
      }
      for (const store::AlertRow& a : *page) {
        ++alert_kinds_[a.kind];
        alerts_seen_up_to_ = std::max(alerts_seen_up_to_, a.id);
      }
      if (page->size() < 1000) break;
    }
    f.Family("apollo_alerts_total", MetricType::Counter,
             "Alert rows in the store by kind (read since the orchestrator started; retention "
             "deletes old rows, not counts)");
    for (const auto& [kind, n] : alert_kinds_) f.Add(static_cast<double>(n), {{"kind", kind}});
  }

  f.Counter("apollo_store_commits_total", "Store transactions committed",
            static_cast<double>(store_.Stats().commits));
  f.Family("apollo_scrape_errors", MetricType::Gauge,
           "1 for each source this scrape could not read (its metrics are left out)");
  for (const char* source : {"store", "bus"}) f.Add(errors.count(source), {{"source", source}});

  std::vector<MetricFamily> all = metrics_.registry().Collect();
  for (MetricFamily& m : f.families()) all.push_back(std::move(m));
  return prometheus::TextSerializer().Serialize(all);
}

}  // namespace apollo::orchestrator
