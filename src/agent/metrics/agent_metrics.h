#pragma once

// The agent's own metrics, in the Prometheus text format (the body of the
// agent's GET /metrics, `metrics_listen`), read from their owners at each
// scrape:
//
//   apollo_agent_wal_fsync_seconds            histogram of the WAL's batch fdatasyncs
//   apollo_agent_wal_{records,bytes}_total    appended since start
//   apollo_agent_wal_segments                 live segment files
//   apollo_agent_wal_unacked_events           events written, not yet acknowledged by the center
//   apollo_agent_queue_depth                  intents accepted, waiting for a slot
//   apollo_agent_running_handlers             handlers running now
//   apollo_agent_conservative_mode            1 while cut off past the autonomy window
//   apollo_agent_connected, apollo_agent_synced  the session to the center
//   apollo_agent_sessions_started_total       sessions opened (reconnects + 1)
//   apollo_agent_build_info{version,node}     1
//
// Thread-safety: Text may be called from any thread (each source is
// thread-safe).

#include <string>

#include "agent/executor.h"
#include "agent/session.h"
#include "agent/wal/wal.h"

namespace apollo::agent {

struct AgentMetricsSources {
  std::string node_id;
  const wal::Wal* wal = nullptr;
  const Executor* executor = nullptr;
  const Session* session = nullptr;
};

std::string AgentMetricsText(const AgentMetricsSources& s);

}  // namespace apollo::agent
