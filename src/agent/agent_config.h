#pragma once

// The edge agent's configuration: config/edge-agent.yaml, then command-line
// overrides on top, so one file can serve many agents.
//
// Loading reports EVERY problem of the file at once, each as
// "file:line:column: message" (core's Diagnostic). Nothing here throws.
//
// Address: the orchestrator serves the operator API and the agent gateway on
// ONE port (default 127.0.0.1:7011, see orchestrator/orchestrator_config.h),
// so an agent's default `orchestrator` is 127.0.0.1:7011 too. Several
// replicas sharing one store (docs/replicas.md) are all listed: `orchestrator`
// is one "host:port", several separated by commas, or a YAML list of them
// (--orchestrator: one or comma-separated); the session finds the leader
// among them (session.h).
//
// Paths: `state_dir` and `wal_path` are used as given (relative ones are
// relative to the agent's working directory). When `wal_path` is not set, it
// is <state_dir>/wal of the FINAL state_dir, so `--state-dir` alone moves the
// WAL too (two agents on one machine need only distinct --state-dir).
//
// Intents: `enabled_intents` lists the built-ins this node runs; exec is
// not among them by default (it runs any command), so a node runs it only
// when its config lists it or edge-agent gets --enable-intent exec. The
// `exec` and `ensure_file` sections limit what those two may do (see
// agent/handlers/builtin_handlers.h ExecPolicy / EnsureFilePolicy).
//
// Thread-safety: values and pure functions; LoadAgentConfig reads a file.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/config_values.h"
#include "core/status.h"
#include "core/task_spec.h"
#include "tls/tls_paths.h"

namespace apollo::agent {

inline constexpr std::string_view kDefaultOrchestrator = "127.0.0.1:7011";
inline constexpr std::string_view kDefaultStateDir = "./var/agent";

// The built-in intents (agent/handlers/registry.h BuiltinIntentNames(); a
// test keeps the two lists equal).
const std::vector<std::string>& BuiltinIntents();
// Those enabled unless the config says otherwise: all but exec (registry.h
// DefaultEnabledBuiltins(); a test keeps them equal).
const std::vector<std::string>& DefaultEnabledIntents();

// The `exec` section.
struct ExecConfig {
  // Absolute paths or fnmatch globs ("/usr/bin/*") that argv[0], resolved
  // on the child's PATH, must match. Empty: any command (once enabled).
  std::vector<std::string> allowed_commands;
  friend bool operator==(const ExecConfig&, const ExecConfig&) = default;
};

// The `ensure_file` section.
struct EnsureFileConfig {
  // Absolute directories (no trailing '/') ensure_file may write below.
  // Empty: none, so every ensure_file is refused.
  std::vector<std::string> allowed_dirs;
  bool allow_special_modes = false;  // setuid / setgid / sticky bits
  friend bool operator==(const EnsureFileConfig&, const EnsureFileConfig&) = default;
};

struct ReconnectConfig {
  Duration initial_backoff = std::chrono::milliseconds(500);  // initial_backoff_ms
  Duration max_backoff = std::chrono::milliseconds(30'000);   // max_backoff_ms
  friend bool operator==(const ReconnectConfig&, const ReconnectConfig&) = default;
};

struct WalConfig {
  int64_t segment_size_mb = 64;
  // Acknowledged segments older than this are deleted, or moved to
  // archive_dir when it is set (the seed: keep 7 days, then archive).
  Duration retention = std::chrono::hours(168);  // retention_hours
  std::string archive_dir;                       // empty: delete, don't archive
  friend bool operator==(const WalConfig&, const WalConfig&) = default;
};

struct AgentConfig {
  std::string node_id;                          // required (file or --node-id)
  std::map<std::string, std::string> labels;    // e.g. role: worker
  std::vector<std::string> groups;
  // The orchestrator replicas to dial, in the order given: never empty, no
  // two equal. One entry: a single orchestrator, as before replicas.
  std::vector<HostPort> orchestrators{HostPort{"127.0.0.1", 7011}};
  std::string state_dir{kDefaultStateDir};
  std::string wal_path;                         // empty until FinishAgentConfig
  Duration heartbeat_interval = std::chrono::seconds(10);    // 1 s .. 5 min
  int max_concurrency = 2;                      // default 2 x cores, 1..1024
  Duration autonomy_window = std::chrono::seconds(60);       // 30 s .. 2 min
  Duration state_sync_interval = std::chrono::seconds(300);  // 10 s .. 1 d
  std::map<std::string, std::string> handlers;  // intent -> absolute executable
  std::vector<std::string> enabled_intents = DefaultEnabledIntents();
  ExecConfig exec;
  EnsureFileConfig ensure_file;
  Duration kill_grace = std::chrono::seconds(5);  // SIGTERM .. SIGKILL, 0 .. 5 min
  // final_event_hold_ms, 0 .. 1000: how long a task's ACCEPTED may wait for
  // its final event, so a short task costs the center one message and one
  // commit (session.h SessionOptions::accepted_hold).
  Duration final_event_hold = std::chrono::milliseconds(2);
  std::vector<std::string> metrics_paths{"/"};    // collect_metrics' disks
  ReconnectConfig reconnect;
  WalConfig wal;
  // Mutual TLS to the orchestrator (`tls:` cert, key, ca; all three or
  // none). The certificate should be this node's (apollo-cli tls cert
  // create --node NODE_ID): the orchestrator refuses a Hello for any other.
  tls::TlsPaths tls;
  // /metrics and /healthz over plain HTTP (`metrics_listen: host:port`;
  // port 0: any). Unset (the default, or `off`): not served.
  std::optional<HostPort> metrics_listen;
  std::string log_format{"text"};  // text | json (core/log.h)

  friend bool operator==(const AgentConfig&, const AgentConfig&) = default;
};

// Every default, with max_concurrency = 2 x `cores` (clamped to 1..1024;
// cores < 1 counts as 1). The caller passes the machine's core count
// (std::thread::hardware_concurrency()); the parser never asks the system.
AgentConfig DefaultAgentConfig(int cores);

struct ParsedAgentConfig {
  AgentConfig config;
  std::vector<Diagnostic> errors;  // empty: the file is valid; in file order
  bool ok() const { return errors.empty(); }
};

// Parses and validates `content` (the text of `file_name`) over
// DefaultAgentConfig(cores). An empty file is valid. A missing node_id is NOT
// an error here (the command line may supply it): FinishAgentConfig checks.
// wal_path stays empty unless the file sets it.
ParsedAgentConfig ParseAgentConfig(std::string_view content, std::string_view file_name,
                                   int cores);

// The command line's view of the common keys. Values are as typed, checked
// by ApplyAgentOverrides.
struct AgentOverrides {
  std::optional<std::string> node_id;       // --node-id: replaces the file's
  std::vector<std::string> labels;          // --label k=v: set or replace key k
  std::vector<std::string> groups;          // --group g: added to the file's
  std::optional<std::string> orchestrator;  // --orchestrator host:port[,host:port...]
  std::optional<std::string> wal_path;      // --wal-path
  std::optional<std::string> state_dir;     // --state-dir
  std::optional<std::string> tls_cert;      // --tls-cert: replaces tls.cert
  std::optional<std::string> tls_key;       // --tls-key
  std::optional<std::string> tls_ca;        // --tls-ca
  std::vector<std::string> enable_intents;  // --enable-intent NAME: added to enabled_intents
  std::optional<std::string> metrics_listen;  // --metrics-listen host:port | off
  std::optional<std::string> log_format;      // --log-format text|json
};

// Applies `overrides` to `config`, then FinishAgentConfig. InvalidArgument
// naming the flag for a bad value ("--label 'role': expected key=value"),
// every problem in one message, one per line; `config` is unchanged on
// error.
Status ApplyAgentOverrides(AgentConfig& config, const AgentOverrides& overrides);

// Fills what is derived (wal_path = <state_dir>/wal when unset) and checks
// what only the whole can tell: node_id is set. InvalidArgument otherwise.
Status FinishAgentConfig(AgentConfig& config);

// Reads `path` (bounded, core's ReadConfigFile), parses it, applies the
// overrides, finishes. A missing file (or an empty `path`: none given) is
// accepted only when overrides give node_id (then defaults are used);
// otherwise NotFound saying so. A bad file
// is InvalidArgument whose message is every diagnostic, one per line.
Result<AgentConfig> LoadAgentConfig(const std::string& path, const AgentOverrides& overrides,
                                    int cores);

}  // namespace apollo::agent
