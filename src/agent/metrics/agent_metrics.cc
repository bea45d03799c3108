#include "agent/metrics/agent_metrics.h"

#include "core/metric_families.h"
#include "core/version.h"

namespace apollo::agent {

std::string AgentMetricsText(const AgentMetricsSources& s) {
  MetricFamilies f;
  f.Family("apollo_agent_build_info", prometheus::MetricType::Gauge,
           "Always 1; the release and the node in its labels");
  f.Add(1, {{"version", kVersion}, {"node", s.node_id}});
  if (s.wal) {
    const wal::WalStats w = s.wal->stats();
    f.Histogram("apollo_agent_wal_fsync_seconds",
                "Durations of the WAL's fdatasyncs (one per group-committed batch)",
                wal::kWalSyncBuckets, w.sync_buckets, w.sync_seconds);
    f.Counter("apollo_agent_wal_records_total", "WAL records appended since start",
              static_cast<double>(w.records));
    f.Counter("apollo_agent_wal_bytes_total", "WAL bytes written since start",
              static_cast<double>(w.bytes));
    f.Gauge("apollo_agent_wal_segments", "Live WAL segment files", static_cast<double>(w.segments));
    const uint64_t last = s.wal->last_seq(), acked = s.wal->acked_seq();
    f.Gauge("apollo_agent_wal_unacked_events",
            "Events in the WAL the center has not acknowledged yet",
            static_cast<double>(last > acked ? last - acked : 0));
  }
  if (s.executor) {
    f.Gauge("apollo_agent_queue_depth", "Intents accepted and waiting for a free slot",
            static_cast<double>(s.executor->queued()));
    f.Gauge("apollo_agent_running_handlers", "Handlers running now",
            static_cast<double>(s.executor->Running().size()));
    f.Gauge("apollo_agent_conservative_mode",
            "1 while the agent is conservative (cut off past the autonomy window: no new work)",
            s.executor->conservative() ? 1 : 0);
  }
  if (s.session) {
    f.Gauge("apollo_agent_connected", "1 while a session to the center is open",
            s.session->connected() ? 1 : 0);
    f.Gauge("apollo_agent_synced",
            "1 once the open session's backlog and snapshot are acknowledged",
            s.session->synced() ? 1 : 0);
    f.Counter("apollo_agent_sessions_started_total", "Sessions to the center opened since start",
              static_cast<double>(s.session->sessions_started()));
  }
  return f.Text();
}

}  // namespace apollo::agent
