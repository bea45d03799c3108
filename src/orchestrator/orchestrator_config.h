#pragma once

// The orchestrator's configuration: config/orchestrator.yaml, then
// command-line overrides (--listen, --store, --bus) on top.
//
// Loading reports EVERY problem of the file at once, each as
// "file:line:column: message" (core's Diagnostic). Nothing here throws.
//
// ONE PORT. `listen` (default 127.0.0.1:7011) serves both gRPC services: the
// operator API (apollo-cli) and the agent gateway (edge agents). gRPC routes
// by service name, so one port costs nothing and gives operators one address
// to open in a firewall, one to put behind a load balancer, and one default
// shared by apollo-cli --server and the agent's `orchestrator` key. If the
// two ever need to be apart (e.g. the agent port on a different interface),
// an `agent_listen` key can be added without breaking this file format.
//
// TLS (`tls:` block, or --tls-cert/--tls-key/--tls-ca): all three paths or
// none. With TLS the port requires client certificates signed by `tls.ca`
// (agents and apollo-cli both present one), and operator calls need a token
// (`acl:` block; on by default with TLS, see access_control.h). Without both
// the orchestrator listens only on a loopback address unless --insecure
// (CheckExposure).
//
// Thread-safety: values and pure functions; LoadOrchestratorConfig reads a
// file.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/config_values.h"
#include "core/retry_policy.h"
#include "core/status.h"
#include "core/task_spec.h"
#include "tls/tls_paths.h"

namespace apollo::orchestrator {

inline constexpr std::string_view kDefaultListen = "127.0.0.1:7011";
inline constexpr std::string_view kDefaultStore = "sqlite://./var/apollo.db";
inline constexpr std::string_view kEmbeddedBus = "embedded";

// A RUNNING task past its timeout on a node that is alive and reports
// progress is given more time, at most max_extensions times.
struct ExecutionExtensionConfig {
  Duration extend_by{0};  // 0: the task's own timeout
  int max_extensions = 1;
  friend bool operator==(const ExecutionExtensionConfig&,
                         const ExecutionExtensionConfig&) = default;
};

struct AdmissionConfig {
  // Ceiling on agent sessions admitted per second; below it the window of
  // handshakes in flight adapts to the center's capacity (admission.h).
  int max_new_sessions_per_s = 2000;
  friend bool operator==(const AdmissionConfig&, const AdmissionConfig&) = default;
};

struct CircuitBreakerConfig {
  int failures = 5;                             // consecutive, per intent
  Duration cool_down = std::chrono::seconds(30);  // open -> half-open
  friend bool operator==(const CircuitBreakerConfig&, const CircuitBreakerConfig&) = default;
};

// Token bucket on re-dispatches (retries, ack-timeout resends).
struct RetryBudgetConfig {
  double rate_per_s = 50;
  int burst = 100;
  friend bool operator==(const RetryBudgetConfig&, const RetryBudgetConfig&) = default;
};

// Dispatch queue watermarks, as fractions of capacity:
// 0 < alert_at < pause_at <= 1.
struct QueueConfig {
  int64_t capacity = 10'000;
  double alert_at = 0.8;
  double pause_at = 0.9;
  friend bool operator==(const QueueConfig&, const QueueConfig&) = default;
};

// What the retention runner keeps; older rows go in small batches.
struct RetentionConfig {
  Duration dedup = std::chrono::hours(24);          // event ids kept for dedup
  Duration history = std::chrono::hours(168);       // settled tasks, whole
  Duration alerts = std::chrono::hours(168);        // alerts
  Duration dead_letters = std::chrono::hours(720);  // dead-lettered events
  Duration audit = std::chrono::hours(2160);        // the operator audit trail
  Duration interval = std::chrono::seconds(60);     // between purge rounds
  int batch = 500;                                  // rows of a kind per transaction
  friend bool operator==(const RetentionConfig&, const RetentionConfig&) = default;
};

enum class SqliteSync { kFull, kNormal };
// "FULL" / "NORMAL", as SQLite's PRAGMA synchronous (and store::StoreOptions) spell it.
std::string_view SqliteSyncName(SqliteSync s);

struct StoreOptionsConfig {
  SqliteSync synchronous = SqliteSync::kFull;  // file: full | normal
  int batch_max = 1000;                        // events per store transaction
  int writers = 3;                             // PostgreSQL write connections
  int event_writers = 2;                       // of them, the ones applying events
  friend bool operator==(const StoreOptionsConfig&, const StoreOptionsConfig&) = default;
};

struct BusOptionsConfig {
  int partitions = 16;   // by task_id hash
  int max_deliver = 5;   // tries before an event is dead-lettered
  friend bool operator==(const BusOptionsConfig&, const BusOptionsConfig&) = default;
};

struct CallbackConfig {
  Duration timeout = std::chrono::seconds(5);  // one POST
  int max_attempts = 5;
  // Internal hosts (loopback, private, link-local) callbacks may reach.
  std::vector<std::string> allowed_hosts;
  friend bool operator==(const CallbackConfig&, const CallbackConfig&) = default;
};

// Alert delivery to a webhook (see alert_notifier.h).
struct AlertsConfig {
  std::string webhook_url;                     // empty: alerts stay in the store
  std::map<std::string, std::string> headers;  // sent with every POST
  Duration timeout = std::chrono::seconds(5);  // one POST
  int max_attempts = 10;                       // then the alert shows gave_up
  friend bool operator==(const AlertsConfig&, const AlertsConfig&) = default;
};

// Bounds on what clients can make the center hold (gateway_service.h,
// concurrency_limit.h): agent streams (counted before their Hello), the
// Hello deadline, WatchTask watchers, and each session's queue of messages
// not yet written to a peer that stopped reading.
struct LimitsConfig {
  Duration hello_timeout = std::chrono::seconds(10);
  int64_t max_sessions = 10'000;
  int64_t max_watchers = 256;
  int64_t session_outbound_mib = 64;
  // While this many agent EventBatches are committing at once, intents wait
  // up to busy_hold and go together (intent_hold.h); 0: never.
  int64_t busy_batches = 16;
  Duration busy_hold = std::chrono::milliseconds(200);
  friend bool operator==(const LimitsConfig&, const LimitsConfig&) = default;
};

// The HTTP server (src/orchestrator/http/): /healthz, /readyz, /metrics and
// the JSON API, on its own address. `http.listen: off` (or "") turns it off.
inline constexpr std::string_view kDefaultHttpListen = "127.0.0.1:7080";
struct HttpConfig {
  bool enabled = true;
  HostPort listen{"127.0.0.1", 7080};  // port 0: the kernel picks one (tests)
  int threads = 16;                    // worker threads: connections served at once
  // The dashboard's files (web/dist). Empty: `../web/dist` beside the
  // orchestrator binary's directory, if it is there.
  std::string ui_dir;
  // Not being able to listen is fatal, except on the default address, which
  // only turns HTTP off with a warning (e.g. a second orchestrator on the
  // same host, as tests start them).
  bool DefaultAddress() const { return listen == HostPort{"127.0.0.1", 7080}; }
  friend bool operator==(const HttpConfig&, const HttpConfig&) = default;
};

// Several orchestrators on one PostgreSQL store (docs/replicas.md).
struct ReplicationConfig {
  // This replica's name in the lease and in cluster status; "" = the host
  // name and the listen port ("host:7011").
  std::string replica_id;
  // Where agents and operators reach this replica (given to agents that
  // dialled a follower); unset = the listen address (the host name for
  // 0.0.0.0 / ::).
  std::optional<HostPort> advertise;
  // The leader lease: renewed every third of it; a dead leader's work
  // moves to another replica once it ran out.
  Duration lease_ttl = std::chrono::seconds(5);
  friend bool operator==(const ReplicationConfig&, const ReplicationConfig&) = default;
};

struct OrchestratorConfig {
  // Operator API + agent gateway. Port 0: the kernel picks one (tests).
  HostPort listen{"127.0.0.1", 7011};
  std::string store{kDefaultStore};            // sqlite://PATH | postgresql://...
  std::string bus{kEmbeddedBus};               // embedded | nats://host:port
  std::string log_format{"text"};              // text | json (core/log.h)
  Duration dispatch_interval = std::chrono::seconds(1);
  Duration state_sync_interval = std::chrono::seconds(300);
  Duration ack_timeout = std::chrono::seconds(10);
  Duration heartbeat_interval = std::chrono::seconds(10);  // expected from agents
  int64_t max_heartbeats_per_s = 100;  // a larger fleet beats less often (0: never)
  Duration suspect_after = std::chrono::seconds(30);       // silent -> SUSPECT
  Duration lost_after = std::chrono::seconds(60);          // silent -> LOST
  Duration start_timeout = std::chrono::seconds(600);      // 0: wait forever
  ExecutionExtensionConfig execution_extension;
  // The file's presets are merged over these: naming "fast" replaces it. A
  // preset's missing fields take RetryPolicy's defaults (3 retries, 5 s,
  // 60 s, exponential, no jitter).
  std::map<std::string, RetryPolicy> retry_presets{{"fast", RetryPolicy::Fast()},
                                                   {"slow", RetryPolicy::Slow()}};
  AdmissionConfig admission;
  CircuitBreakerConfig circuit_breaker;
  RetryBudgetConfig retry_budget;
  QueueConfig queue;
  RetentionConfig retention;
  StoreOptionsConfig store_options;
  BusOptionsConfig bus_options;
  CallbackConfig callbacks;
  AlertsConfig alerts;
  LimitsConfig limits;
  HttpConfig http;
  ReplicationConfig replication;
  // Mutual TLS: cert, key, ca (paths). Off when empty.
  tls::TlsPaths tls;
  // --insecure only (never from the file): serve a non-loopback address
  // without TLS or without tokens, with a loud warning.
  bool insecure = false;
  // Operator tokens (`acl.enabled`, or --acl): unset means on exactly when
  // TLS is on.
  std::optional<bool> acl_enabled;
  bool AclEnabled() const { return acl_enabled.value_or(tls.complete()); }

  friend bool operator==(const OrchestratorConfig&, const OrchestratorConfig&) = default;
};

struct ParsedOrchestratorConfig {
  OrchestratorConfig config;       // defaults, with the file's valid values
  std::vector<Diagnostic> errors;  // empty: the file is valid; in file order
  bool ok() const { return errors.empty(); }
};

// Parses and validates `content` (the text of `file_name`) over the defaults.
// An empty file is valid.
ParsedOrchestratorConfig ParseOrchestratorConfig(std::string_view content,
                                                 std::string_view file_name);

// OK when `url` is a store URL the orchestrator accepts: sqlite://<path>
// (sqlite://./rel/apollo.db, sqlite:///abs/apollo.db) or
// postgresql://... / postgres://... (libpq's URI). InvalidArgument saying why.
Status CheckStoreUrl(std::string_view url);
// OK for "embedded" or nats://host:port.
Status CheckBusUrl(std::string_view url);
// OK for 1..128 letters, digits, '-', '_', '.', ':'.
Status CheckReplicaId(std::string_view id);

struct OrchestratorOverrides {
  std::optional<std::string> listen;  // --listen host:port
  std::optional<std::string> store;   // --store URL
  std::optional<std::string> bus;     // --bus embedded|nats://host:port
  std::optional<std::string> http_listen;  // --http-listen host:port | off
  std::optional<std::string> http_ui_dir;  // --http-ui-dir DIR
  std::optional<std::string> log_format;   // --log-format text|json
  std::optional<std::string> replica_id;   // --replica-id ID
  std::optional<std::string> advertise;    // --advertise host:port
  std::optional<std::string> tls_cert;  // --tls-cert PATH: replaces tls.cert
  std::optional<std::string> tls_key;   // --tls-key PATH
  std::optional<std::string> tls_ca;    // --tls-ca PATH
  bool insecure = false;                // --insecure
  bool acl = false;                     // --acl: operator tokens required
};

// Applies the overrides after checking them. InvalidArgument naming the flag
// ("--listen: ..."), every problem in one message, one per line; `config`
// is unchanged on error.
Status ApplyOrchestratorOverrides(OrchestratorConfig& config,
                                  const OrchestratorOverrides& overrides);

// Whether `config` may serve on its listen address, and what to warn about.
// Refused (FailedPrecondition, one line naming the flags): a non-loopback
// address without TLS and operator tokens both, unless config.insecure. This is the one place that
// decides what a reachable port needs; further rules (e.g. tokens) go here.
struct ExposureVerdict {
  Status status;                      // not OK: do not start
  std::vector<std::string> warnings;  // to log loudly at start
};
ExposureVerdict CheckExposure(const OrchestratorConfig& config);

// True for 127.0.0.0/8, ::1 and "localhost": addresses only this machine
// can reach.
bool IsLoopbackHost(std::string_view host);

// Reads `path` (bounded, core's ReadConfigFile), parses it, applies the
// overrides. An empty `path` means no file: defaults plus overrides. A
// missing file is NotFound (it was named on purpose). A bad file is
// InvalidArgument whose message is every diagnostic, one per line.
Result<OrchestratorConfig> LoadOrchestratorConfig(const std::string& path,
                                                  const OrchestratorOverrides& overrides);

}  // namespace apollo::orchestrator
