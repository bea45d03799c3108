#include "agent/runtime_options.h"

#include <sstream>

namespace apollo::agent {
namespace {

int64_t Ms(Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

template <typename List>
std::string Joined(const List& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + std::string(s);
  return out;
}

}  // namespace

AgentRuntimeOptions DeriveAgentRuntimeOptions(const AgentConfig& c) {
  AgentRuntimeOptions r;
  r.state_dir = c.state_dir;
  r.wal_path = c.wal_path;
  r.tls = c.tls;
  r.metrics_listen = c.metrics_listen;
  r.log_format = c.log_format;

  r.wal.node_id = c.node_id;
  r.wal.segment_size = static_cast<uint64_t>(c.wal.segment_size_mb) << 20;
  r.wal.retention = c.wal.retention;
  r.wal.archive_dir = c.wal.archive_dir;

  r.handlers.enabled_builtins = c.enabled_intents;
  r.handlers.external = c.handlers;
  r.handlers.process.kill_grace =
      std::chrono::duration_cast<std::chrono::milliseconds>(c.kill_grace);
  r.handlers.metrics_paths = c.metrics_paths;
  r.handlers.exec.allowed_commands = c.exec.allowed_commands;
  r.handlers.ensure_file.allowed_dirs = c.ensure_file.allowed_dirs;
  r.handlers.ensure_file.allow_special_modes = c.ensure_file.allow_special_modes;

  SessionOptions& s = r.session;
  s.node_id = c.node_id;
  s.orchestrators.clear();
  for (const HostPort& hp : c.orchestrators) s.orchestrators.push_back(hp.ToString());
  s.labels = c.labels;
  s.groups = c.groups;
  s.heartbeat_interval = c.heartbeat_interval;
  s.autonomy_window = c.autonomy_window;
  s.state_sync_interval = c.state_sync_interval;
  s.initial_backoff = c.reconnect.initial_backoff;
  s.max_backoff = c.reconnect.max_backoff;
  s.accepted_hold = c.final_event_hold;

  r.executor.node_id = c.node_id;
  r.executor.max_concurrency = c.max_concurrency;
  return r;
}

std::string Fingerprint(const AgentRuntimeOptions& r) {
  std::ostringstream out;
  out << "metrics_listen=" << (r.metrics_listen ? r.metrics_listen->ToString() : "off") << "\n";
  out << "log_format=" << r.log_format << "\n";
  out << "state_dir=" << r.state_dir << "\nwal_path=" << r.wal_path << "\ntls.cert=" << r.tls.cert
      << "\ntls.key=" << r.tls.key << "\ntls.ca=" << r.tls.ca << "\n";
  out << "wal.node_id=" << r.wal.node_id << "\nwal.segment_size=" << r.wal.segment_size
      << "\nwal.retention_ms=" << Ms(r.wal.retention) << "\nwal.archive_dir=" << r.wal.archive_dir
      << "\n";
  const HandlerConfig& h = r.handlers;
  out << "handlers.enabled=" << Joined(h.enabled_builtins) << "\n";
  for (const auto& [intent, path] : h.external)
    out << "handlers.external." << intent << "=" << path << "\n";
  out << "handlers.kill_grace_ms=" << Ms(h.process.kill_grace) << "\n"
      << "handlers.metrics_paths=" << Joined(h.metrics_paths) << "\n"
      << "handlers.exec.allowed_commands=" << Joined(h.exec.allowed_commands) << "\n"
      << "handlers.ensure_file.allowed_dirs=" << Joined(h.ensure_file.allowed_dirs) << "\n"
      << "handlers.ensure_file.allow_special_modes=" << h.ensure_file.allow_special_modes << "\n";
  const SessionOptions& s = r.session;
  out << "session.node_id=" << s.node_id << "\nsession.orchestrators=" << Joined(s.orchestrators)
      << "\n";
  for (const auto& [k, v] : s.labels) out << "session.label." << k << "=" << v << "\n";
  out << "session.groups=" << Joined(s.groups) << "\n"
      << "session.heartbeat_interval_ms=" << Ms(s.heartbeat_interval) << "\n"
      << "session.autonomy_window_ms=" << Ms(s.autonomy_window) << "\n"
      << "session.state_sync_interval_ms=" << Ms(s.state_sync_interval) << "\n"
      << "session.initial_backoff_ms=" << Ms(s.initial_backoff) << "\n"
      << "session.max_backoff_ms=" << Ms(s.max_backoff) << "\n"
      << "session.max_batch=" << s.max_batch << "\n"
      << "session.accepted_hold_ms=" << Ms(s.accepted_hold) << "\n";
  out << "executor.node_id=" << r.executor.node_id << "\n"
      << "executor.max_concurrency=" << r.executor.max_concurrency << "\n"
      << "executor.max_finished=" << r.executor.max_finished << "\n"
      << "executor.checkpoint_every=" << r.executor.checkpoint_every << "\n";
  return out.str();
}

}  // namespace apollo::agent
