// bin/edge-agent: runs on every node. Recovers its WAL, dials the
// orchestrator and carries out the intents it is sent.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "agent/agent_config.h"
#include "agent/executor.h"
#include "agent/handlers/registry.h"
#include "agent/metrics/agent_metrics.h"
#include "agent/metrics/metrics_server.h"
#include "agent/runtime_options.h"
#include "agent/session.h"
#include "agent/wal/wal.h"
#include "agent/wal_dump.h"
#include "core/build_info.h"
#include "core/grpc_process.h"
#include "core/log.h"
#include "core/version.h"
#include "tls/tls_files.h"

namespace {

// A log message from pieces, as they would be streamed.
template <typename... T>
std::string Msg(const T&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

using apollo::agent::AgentConfig;

// Test-only knobs: fault-injection tests need an autonomy window of
// seconds, below the 30 s the config file allows, a snapshot held back
// after reconnect to watch the center meanwhile, an agent that takes
// intents at a known slow rate (overload tests), a node whose clock is off
// by minutes, a link that duplicates every event batch, and a planted bug
// (tests/chaos). Only the test build (build/*/test-bin/edge-agent,
// APOLLO_TEST_HOOKS) has the flags that set them; in bin/edge-agent they
// stay zero, whatever the command line or the environment says.
struct TestKnobs {
  int64_t autonomy_window_ms = 0;
  int64_t snapshot_delay_ms = 0;
  int64_t intent_delay_ms = 0;
  int64_t clock_offset_s = 0;
  bool duplicate_delivery = false;
  bool disable_claim_check = false;
};

// The wall clock shifted by a fixed offset: a node with a skewed clock.
class OffsetClock final : public apollo::Clock {
 public:
  explicit OffsetClock(apollo::Duration offset) : offset_(offset) {}
  apollo::TimePoint Now() const override { return real_.Now() + offset_; }

 private:
  apollo::RealClock real_;
  apollo::Duration offset_;
};

// "a, b, c", or `none` for an empty list.
std::string Joined(const std::vector<std::string>& items, const char* none = "none") {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out.empty() ? none : out;
}

// The TLS files of `config`, checked (nullopt without TLS). False after
// printing why they cannot be used. A certificate for another node is only
// warned about: the center is the one that refuses it (and says so).
bool LoadTls(const AgentConfig& config, const apollo::Clock& clock,
             std::optional<apollo::tls::TlsMaterial>* out) {
  if (!config.tls.complete()) return true;
  apollo::tls::TlsSettingNames names{"--tls-cert/tls.cert", "--tls-key/tls.key",
                                     "--tls-ca/tls.ca"};
  auto m = apollo::tls::LoadTlsMaterial(config.tls, clock.Now(), names);
  if (!m.ok()) {
    apollo::log::Error(m.status().message());
    return false;
  }
  for (const std::string& w : m->warnings) apollo::log::Warning(w);
  if (m->node_id != config.node_id) {
    apollo::log::Warning(Msg(
        config.tls.cert, " is ",
        (m->node_id.empty() ? "not a node certificate" : "the certificate of node " + m->node_id),
        ", but this agent is ", config.node_id,
        ": the orchestrator will refuse it (apollo-cli tls cert create --node ", config.node_id,
        ")"));
  }
  *out = std::move(*m);
  return true;
}

int Run(const AgentConfig& config, const TestKnobs& knobs) {
  OffsetClock clock{std::chrono::seconds(knobs.clock_offset_s)};
  std::optional<apollo::tls::TlsMaterial> tls;
  if (!LoadTls(config, clock, &tls)) return 2;
  std::error_code ec;
  std::filesystem::create_directories(config.state_dir, ec);

  apollo::agent::AgentRuntimeOptions runtime = apollo::agent::DeriveAgentRuntimeOptions(config);
  auto wal = apollo::wal::Wal::Open(config.wal_path, runtime.wal, clock);
  if (!wal.ok()) {
    apollo::log::Error(
        Msg("cannot open the WAL at ", config.wal_path, ": ", wal.status().message()));
    return 1;
  }
  const auto& report = (*wal)->recovery_report();
  apollo::log::Info(Msg("WAL recovered: ", report.ToString()));
  for (const auto& region : report.corrupt_regions) {
    apollo::log::Alert(Msg("DATA LOSS in the WAL: ", region.segment, " at byte ", region.offset,
                           " (", region.length, " bytes): ", region.reason,
                           "; reconciliation will repair what it held"));
  }

  auto registry = apollo::agent::HandlerRegistry::Create(runtime.handlers);
  if (!registry.ok()) {
    apollo::log::Error(registry.status().message());
    return 2;
  }
  apollo::log::Info(Msg("intents: ", Joined((*registry)->Intents()),
                        "; disabled here: ", Joined((*registry)->DisabledIntents()),
                        "; exec allowed_commands: ", Joined(config.exec.allowed_commands, "any"),
                        "; ensure_file allowed_dirs: ", Joined(config.ensure_file.allowed_dirs)));

  apollo::agent::SessionOptions& session_options = runtime.session;
  session_options.tls = tls;
  session_options.intents = (*registry)->Intents();
  session_options.disabled_intents = (*registry)->DisabledIntents();
  session_options.agent_version = apollo::kVersion;
  session_options.log = [](const std::string& line) { apollo::log::Info(line); };
  if (knobs.autonomy_window_ms > 0) {
    session_options.autonomy_window = std::chrono::milliseconds(knobs.autonomy_window_ms);
  }
  session_options.test_snapshot_delay = std::chrono::milliseconds(knobs.snapshot_delay_ms);
  session_options.test_intent_delay = std::chrono::milliseconds(knobs.intent_delay_ms);
  session_options.test_duplicate_delivery = knobs.duplicate_delivery;
  apollo::agent::Session session(session_options, **wal, clock);

  apollo::agent::ExecutorOptions& exec_options = runtime.executor;
  exec_options.test_disable_claim_check = knobs.disable_claim_check;
  apollo::agent::Executor executor(exec_options, **wal, **registry, clock, session);
  session.SetExecutor(&executor);
  auto note = executor.Recover();
  if (!note.ok()) {
    apollo::log::Error(Msg("cannot write to the WAL: ", note.status().message()));
    return 1;
  }
  apollo::log::Info(Msg("release ", apollo::kVersion, ", node ", config.node_id, ": ", *note,
                        "; dialling ", Joined(session_options.orchestrators),
                        (tls ? " (mutual TLS)" : "")));
  std::unique_ptr<apollo::agent::MetricsServer> metrics;
  if (runtime.metrics_listen) {
    apollo::agent::AgentMetricsSources sources{config.node_id, wal->get(), &executor, &session};
    metrics = std::make_unique<apollo::agent::MetricsServer>(
        *runtime.metrics_listen, [sources] { return apollo::agent::AgentMetricsText(sources); });
    if (apollo::Status s = metrics->Start(); !s.ok()) {
      apollo::log::Error(Msg(s.message(), " (metrics_listen / --metrics-listen)"));
      executor.Shutdown();
      return 1;
    }
    apollo::log::Info(
        Msg("metrics on http://", runtime.metrics_listen->host, ":", metrics->port(), "/metrics"));
  }
  session.Start();

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int sig = 0;
  sigwait(&set, &sig);
  apollo::log::Info("stopping; running tasks are interrupted and reported at next start");
  if (metrics) metrics->Stop();
  session.Stop();
  executor.Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  apollo::ApplyGrpcProcessSettings();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  CLI::App app{"Apollo-11 edge agent: carries out intents on this node"};
  app.set_version_flag("--version", apollo::VersionLine("edge-agent"));
  std::string config_path;
  apollo::agent::AgentOverrides o;
  app.add_option("--config,-c", config_path, "configuration file (YAML)");
  app.add_option("--node-id", o.node_id, "this node's id");
  app.add_option("--label", o.labels, "label k=v (repeatable)");
  app.add_option("--group", o.groups, "group (repeatable)");
  app.add_option("--orchestrator", o.orchestrator,
                 "host:port of the orchestrator; of each replica, separated by commas "
                 "(a:7011,b:7011,c:7011): the agent finds the leader among them");
  app.add_option("--wal-path", o.wal_path, "write-ahead log directory");
  app.add_option("--state-dir", o.state_dir, "state directory");
  app.add_option("--log-format", o.log_format,
                 "text (default) or json: one JSON object per log line, with task_id, node_id, "
                 "attempt when the line is about a task");
  app.add_option("--metrics-listen", o.metrics_listen,
                 "host:port to serve /metrics and /healthz on (plain HTTP; default off)");
  app.add_option("--tls-cert", o.tls_cert,
                 "this node's certificate (PEM; apollo-cli tls cert create --node NODE_ID)");
  app.add_option("--tls-key", o.tls_key, "the private key of --tls-cert (PEM)");
  app.add_option("--tls-ca", o.tls_ca,
                 "CA certificate (PEM) the orchestrator's certificate must chain to");
  app.add_option("--enable-intent", o.enable_intents,
                 "run this built-in intent although it is off by default or in the config, "
                 "e.g. exec (repeatable)");
  TestKnobs knobs;
#ifdef APOLLO_TEST_HOOKS
  app.add_option("--test-autonomy-window-ms", knobs.autonomy_window_ms)->group("");
  app.add_option("--test-snapshot-delay-ms", knobs.snapshot_delay_ms)->group("");
  app.add_option("--test-intent-delay-ms", knobs.intent_delay_ms)->group("");
  app.add_option("--test-clock-offset-s", knobs.clock_offset_s)->group("");
  app.add_flag("--test-duplicate-delivery", knobs.duplicate_delivery)->group("");
  knobs.disable_claim_check = std::getenv("APOLLO_TEST_DISABLE_CLAIM_CHECK") != nullptr;
#endif
  std::string dump_dir;
  app.add_option("--dump-wal", dump_dir,
                 "print every event in this WAL directory as JSON lines and exit (read-only)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!dump_dir.empty()) return apollo::agent::DumpWal(dump_dir, std::cout, std::cerr);
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  auto config = apollo::agent::LoadAgentConfig(config_path, o, cores);
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 2;
  }
  apollo::log::Init(
      "edge-agent",
      config->log_format == "json" ? apollo::log::Format::kJson : apollo::log::Format::kText,
      config->node_id);
  return Run(*config, knobs);
}
