#include "orchestrator/runtime_options.h"

#include <sstream>

#include "orchestrator/silence_watch.h"

namespace apollo::orchestrator {
namespace {

int64_t Ms(Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

void Policy(std::ostringstream& out, const std::string& name, const RetryPolicy& p) {
  out << name << ".max_retries=" << p.max_retries << "\n"
      << name << ".initial_ms=" << Ms(p.initial_interval) << "\n"
      << name << ".max_ms=" << Ms(p.max_interval) << "\n"
      << name << ".backoff=" << static_cast<int>(p.backoff) << "\n"
      << name << ".jitter=" << p.jitter << "\n"
      << name << ".tiers=" << p.tiers.size() << "\n";
  for (size_t i = 0; i < p.tiers.size(); ++i) {
    const RetryTier& t = p.tiers[i];
    out << name << ".tier" << i << "=" << t.name << "," << t.max_retries << ","
        << Ms(t.initial_interval) << "," << Ms(t.max_interval) << "," << static_cast<int>(t.backoff)
        << "," << t.jitter << "\n";
  }
}

}  // namespace

RuntimeOptions DeriveRuntimeOptions(const OrchestratorConfig& c) {
  RuntimeOptions r;
  r.listen = c.listen;
  r.store_url = c.store;
  r.bus_url = c.bus;
  r.tls = c.tls;
  r.http = c.http;
  r.acl = c.AclEnabled();
  r.insecure = c.insecure;
  r.log_format = c.log_format;

  OrchestratorOptions& o = r.orchestrator;
  o.dispatch_interval = c.dispatch_interval;
  o.ack_timeout = c.ack_timeout;
  o.heartbeat_interval = c.heartbeat_interval;
  o.max_heartbeats_per_s = c.max_heartbeats_per_s;
  o.suspect_after = c.suspect_after;
  o.lost_after = c.lost_after;
  o.state_sync_interval = c.state_sync_interval;
  o.default_start_timeout = std::chrono::duration_cast<std::chrono::seconds>(c.start_timeout);
  o.extend_by = c.execution_extension.extend_by;
  o.max_extensions = c.execution_extension.max_extensions;
  o.retry_presets = BuiltinRetryPresets();
  for (const auto& [name, policy] : c.retry_presets) o.retry_presets[name] = policy;
  o.orchestrator_id = "orchestrator@" + c.listen.ToString();
  o.max_new_sessions_per_s = c.admission.max_new_sessions_per_s;
  o.breaker_failures = c.circuit_breaker.failures;
  o.breaker_cool_down = c.circuit_breaker.cool_down;
  o.retry_rate_per_s = c.retry_budget.rate_per_s;
  o.retry_burst = c.retry_budget.burst;
  o.queue_capacity = c.queue.capacity;
  o.queue_alert_at = c.queue.alert_at;
  o.queue_pause_at = c.queue.pause_at;
  o.max_watchers = c.limits.max_watchers;

  r.gateway.hello_timeout = c.limits.hello_timeout;
  r.gateway.max_streams = c.limits.max_sessions;
  r.gateway.max_outbound_bytes = c.limits.session_outbound_mib << 20;
  r.gateway.busy_batches = c.limits.busy_batches;
  r.gateway.busy_hold_limit = c.limits.busy_hold;
  r.gateway.tls = c.tls.complete();
  // Agents heartbeat at this center's interval (it is in their Welcome).
  r.gateway.silence_limit = SilenceLimitFor(c.heartbeat_interval);

  r.store.sqlite_synchronous = std::string(SqliteSyncName(c.store_options.synchronous));
  r.store.batch_cap = c.store_options.batch_max;
  r.store.writers = c.store_options.writers;
  r.store.event_writers = c.store_options.event_writers;

  r.bus.partitions = c.bus_options.partitions;
  r.bus.max_deliver = c.bus_options.max_deliver;

  r.callbacks.timeout = c.callbacks.timeout;
  r.callbacks.max_attempts = c.callbacks.max_attempts;
  r.callbacks.allowed_hosts = c.callbacks.allowed_hosts;

  r.alerts.webhook_url = c.alerts.webhook_url;
  o.alert_webhook = !c.alerts.webhook_url.empty();
  for (const auto& [name, value] : c.alerts.headers)
    r.alerts.headers.push_back(name + ": " + value);
  r.alerts.timeout = c.alerts.timeout;
  r.alerts.max_attempts = c.alerts.max_attempts;

  r.retention.policy.dedup_horizon = c.retention.dedup;
  r.retention.policy.history_horizon = c.retention.history;
  r.retention.policy.alert_horizon = c.retention.alerts;
  r.retention.policy.dead_letter_horizon = c.retention.dead_letters;
  r.retention.policy.audit_horizon = c.retention.audit;
  r.retention.policy.batch = c.retention.batch;
  r.retention.interval = c.retention.interval;
  return r;
}

std::string Fingerprint(const RuntimeOptions& r) {
  std::ostringstream out;
  out << "listen=" << r.listen.ToString() << "\nstore_url=" << r.store_url
      << "\nbus_url=" << r.bus_url << "\ntls.cert=" << r.tls.cert << "\ntls.key=" << r.tls.key
      << "\ntls.ca=" << r.tls.ca << "\ninsecure=" << r.insecure << "\nacl=" << r.acl
      << "\nlog_format=" << r.log_format << "\n";
  out << "http.enabled=" << r.http.enabled << "\nhttp.listen=" << r.http.listen.ToString()
      << "\nhttp.threads=" << r.http.threads << "\nhttp.ui_dir=" << r.http.ui_dir << "\n";
  const OrchestratorOptions& o = r.orchestrator;
  out << "dispatch_interval_ms=" << Ms(o.dispatch_interval) << "\n"
      << "ack_timeout_ms=" << Ms(o.ack_timeout) << "\n"
      << "heartbeat_interval_ms=" << Ms(o.heartbeat_interval) << "\n"
      << "max_heartbeats_per_s=" << o.max_heartbeats_per_s << "\n"
      << "heartbeat_flush_ms=" << Ms(o.heartbeat_flush) << "\n"
      << "suspect_after_ms=" << Ms(o.suspect_after) << "\n"
      << "lost_after_ms=" << Ms(o.lost_after) << "\n"
      << "state_sync_interval_ms=" << Ms(o.state_sync_interval) << "\n"
      << "default_start_timeout_s=" << o.default_start_timeout.count() << "\n"
      << "extend_by_ms=" << Ms(o.extend_by) << "\n"
      << "max_extensions=" << o.max_extensions << "\n"
      << "due_batch=" << o.due_batch << "\n"
      << "dispatch_chunk=" << o.dispatch_chunk << "\n"
      << "max_new_sessions_per_s=" << o.max_new_sessions_per_s << "\n"
      << "orchestrator_id=" << o.orchestrator_id << "\n"
      << "breaker_failures=" << o.breaker_failures << "\n"
      << "breaker_cool_down_ms=" << Ms(o.breaker_cool_down) << "\n"
      << "retry_rate_per_s=" << o.retry_rate_per_s << "\n"
      << "retry_burst=" << o.retry_burst << "\n"
      << "queue_capacity=" << o.queue_capacity << "\n"
      << "queue_alert_at=" << o.queue_alert_at << "\n"
      << "queue_pause_at=" << o.queue_pause_at << "\n"
      << "alert_webhook=" << o.alert_webhook << "\n"
      << "max_watchers=" << o.max_watchers << "\n"
      << "gateway.hello_timeout_ms=" << Ms(r.gateway.hello_timeout) << "\n"
      << "gateway.max_streams=" << r.gateway.max_streams << "\n"
      << "gateway.max_outbound_bytes=" << r.gateway.max_outbound_bytes << "\n"
      << "gateway.busy_batches=" << r.gateway.busy_batches << "\n"
      << "gateway.busy_hold_limit_ms=" << Ms(r.gateway.busy_hold_limit) << "\n"
      << "gateway.silence_limit_ms=" << Ms(r.gateway.silence_limit) << "\n"
      << "gateway.tls=" << r.gateway.tls << "\n";
  for (const auto& [name, policy] : o.retry_presets) Policy(out, "preset." + name, policy);
  out << "store.synchronous=" << r.store.sqlite_synchronous << "\n"
      << "store.batch_cap=" << r.store.batch_cap << "\n"
      << "store.readers=" << r.store.reader_connections << "\n"
      << "store.writers=" << r.store.writers << "\n"
      << "store.event_writers=" << r.store.event_writers << "\n"
      << "store.background_checkpoint=" << r.store.background_checkpoint << "\n"
      << "store.cache_kib=" << r.store.cache_kib << "\n"
      << "bus.partitions=" << r.bus.partitions << "\n"
      << "bus.max_deliver=" << r.bus.max_deliver << "\n"
      << "bus.batch_max=" << r.bus.batch_max << "\n"
      << "callbacks.timeout_ms=" << Ms(r.callbacks.timeout) << "\n"
      << "callbacks.max_attempts=" << r.callbacks.max_attempts << "\n"
      << "alerts.webhook_url=" << r.alerts.webhook_url << "\n";
  for (const auto& h : r.callbacks.allowed_hosts) out << "callbacks.allowed_host=" << h << "\n";
  for (const auto& h : r.alerts.headers) out << "alerts.header=" << h << "\n";
  out << "alerts.timeout_ms=" << Ms(r.alerts.timeout) << "\n"
      << "alerts.max_attempts=" << r.alerts.max_attempts << "\n";
  const store::RetentionPolicy& p = r.retention.policy;
  out << "retention.dedup_ms=" << Ms(p.dedup_horizon) << "\n"
      << "retention.history_ms=" << Ms(p.history_horizon) << "\n"
      << "retention.alerts_ms=" << Ms(p.alert_horizon) << "\n"
      << "retention.dead_letters_ms=" << Ms(p.dead_letter_horizon) << "\n"
      << "retention.audit_ms=" << Ms(p.audit_horizon) << "\n"
      << "retention.batch=" << p.batch << "\n"
      << "retention.interval_ms=" << Ms(r.retention.interval) << "\n";
  return out.str();
}

}  // namespace apollo::orchestrator
