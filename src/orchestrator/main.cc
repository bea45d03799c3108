// bin/orchestrator: the center. One gRPC port serves both the agent gateway
// and the operator API.
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "bus/open_bus.h"
#include "core/build_info.h"
#include "core/clock.h"
#include "core/grpc_process.h"
#include "core/log.h"
#include "core/version.h"
#include "orchestrator/alert_notifier.h"
#include "orchestrator/api_service.h"
#include "orchestrator/gateway_service.h"
#include "orchestrator/http/orchestrator_http.h"
#include "orchestrator/leadership.h"
#include "orchestrator/metrics/metered_store.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/orchestrator_config.h"
#include "orchestrator/retention_runner.h"
#include "orchestrator/runtime_options.h"
#include "orchestrator/store_lock.h"
#include "store/open_store.h"
#ifdef APOLLO_TEST_HOOKS
#include "store/testing/test_switches_env.h"
#endif
#include "tls/tls_files.h"

namespace {

// A log message from pieces, as they would be streamed.
template <typename... T>
std::string Msg(const T&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

using apollo::orchestrator::OrchestratorConfig;

// sqlite://./var/apollo.db needs ./var to exist.
void MakeStoreDir(const std::string& url) {
  constexpr std::string_view kSqlite = "sqlite://";
  if (url.rfind(kSqlite, 0) != 0) return;
  std::filesystem::path p(url.substr(kSqlite.size()));
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
}

// The port's credentials: mutual TLS when configured (client certificates
// required and verified against the CA: agents and apollo-cli both present
// one), else plaintext. Null after printing the reason.
std::shared_ptr<grpc::ServerCredentials> PortCredentials(const OrchestratorConfig& config,
                                                         const apollo::Clock& clock) {
  if (!config.tls.complete()) return grpc::InsecureServerCredentials();
  apollo::tls::TlsSettingNames names{"--tls-cert/tls.cert", "--tls-key/tls.key",
                                     "--tls-ca/tls.ca"};
  auto m = apollo::tls::LoadTlsMaterial(config.tls, clock.Now(), names);
  if (!m.ok()) {
    apollo::log::Error(m.status().message());
    return nullptr;
  }
  for (const std::string& w : m->warnings) apollo::log::Warning(w);
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = m->ca_pem;
  options.pem_key_cert_pairs.push_back({m->key_pem, m->cert_pem});
  apollo::log::Info(Msg("TLS on: certificate ", config.tls.cert, " (valid until ", m->not_after,
                        "), client certificates required, signed by ", config.tls.ca));
  return grpc::SslServerCredentials(options);
}

// The arguments this process started with: a deposed leader runs them
// again (RestartAsFollower).
char** g_argv = nullptr;

// A leader that lost its lease holds memory (sessions, caches, in-flight
// work) that may be stale: it starts over as a follower, the same process
// (pid, arguments, log) with nothing carried over. Its writes in flight are
// refused by the store anyway (fenced).
[[noreturn]] void RestartAsFollower(const std::string& why) {
  apollo::log::Error("stepping down: " + why + "; restarting as a follower");
  // Every descriptor but stdin, stdout and stderr closes at the exec, whether
  // or not its library asked for that: a listening socket carried over would
  // share the port (SO_REUSEPORT) with the new image and take its agents.
  if (DIR* fds = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(fds)) {
      const int fd = std::atoi(e->d_name);
      if (fd > 2 && fd != dirfd(fds)) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    closedir(fds);
  }
  execv("/proc/self/exe", g_argv);
  apollo::log::Error(Msg("cannot restart (", std::strerror(errno), "): exiting"));
  _exit(3);
}

// This host's name, for a default replica id and advertised address.
std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

int Run(const OrchestratorConfig& config) {
  apollo::RealClock clock;
  std::shared_ptr<grpc::ServerCredentials> credentials = PortCredentials(config, clock);
  if (!credentials) return 2;
  MakeStoreDir(config.store);
  // SQLite: one orchestrator per store file; PostgreSQL: any number of
  // replicas, one leading at a time (leadership.h).
  const bool single = config.store.rfind("sqlite://", 0) == 0;
  std::optional<apollo::orchestrator::StoreLock> store_lock;
  if (single) {
    auto lock = apollo::orchestrator::StoreLock::Take(
        config.store.substr(std::string_view("sqlite://").size()),
        Msg("pid ", getpid(),
            config.listen.port != 0 ? ", listening on " + config.listen.ToString() : ""));
    if (!lock.ok()) {
      apollo::log::Error(lock.status().message());
      return 2;
    }
    store_lock.emplace(std::move(*lock));
  }
  apollo::orchestrator::RuntimeOptions runtime = apollo::orchestrator::DeriveRuntimeOptions(config);
  auto store = apollo::store::OpenStateStore(config.store, runtime.store, clock);
  if (!store.ok()) {
    apollo::log::Error(Msg("cannot open the store ", config.store, ": ", store.status().message()));
    return 1;
  }
  // Metrics (issue 20): every store write passes through `metered`.
  apollo::orchestrator::OrchestratorMetrics metrics;
  apollo::orchestrator::MeteredStore metered(**store, metrics, clock);
  apollo::store::StateStore& st = metered;
  apollo::orchestrator::CurlPoster poster;
  // Every alert row goes to the webhook, if any (the store is the queue).
  apollo::orchestrator::AlertNotifier alert_notifier(runtime.alerts, st, poster, clock);
  apollo::orchestrator::OrchestratorOptions& options = runtime.orchestrator;
  options.alert = [&alert_notifier](const std::string& line) {
    apollo::log::Alert(line);
    alert_notifier.Kick();
  };
  apollo::orchestrator::Orchestrator brain(options, st, clock);
  // Retention (config `retention:`), in small batches on its own thread.
  apollo::orchestrator::RetentionRunnerOptions& retention = runtime.retention;
  retention.log = [](const std::string& line) { apollo::log::Info(line); };
  apollo::orchestrator::RetentionRunner retention_runner(retention, st);
  apollo::orchestrator::CallbackNotifier callbacks(runtime.callbacks, st, poster, clock);
  brain.SetCallbackNotifier(&callbacks);
  // The event bus (config `bus`): agent events reach the store through it.
  apollo::bus::BusOptions& bus_options = runtime.bus;
  // Replicas share NATS's durable consumers: only the leader consumes (its
  // sessions publish, and it waits for their commits), from its election.
  if (!single && config.bus != apollo::orchestrator::kEmbeddedBus) bus_options.consume = false;
  // Logged, and kept as an alert row (apollo-cli alert list --kind dead_letter).
  bus_options.on_alert = [alerts = &st, &alert_notifier](const apollo::bus::BusAlert& a) {
    apollo::log::Alert(Msg("dead letter ", a.event_id, " (task ", a.task_id, ", ", a.deliveries,
                           " deliveries): ", a.reason),
                       apollo::log::Fields::Of(a.task_id, a.node_id, std::nullopt, a.event_id));
    apollo::store::AlertRow row;
    row.kind = a.kind;
    row.task_id = a.task_id;
    row.node_id = a.node_id;
    row.event_id = a.event_id;
    row.detail = "event parked after " + std::to_string(a.deliveries) +
                 " deliveries: " + a.reason + " (see apollo-cli dlq list)";
    auto id = alerts->AddAlert(row);
    if (!id.ok()) {
      apollo::log::Error(Msg("cannot record the dead-letter alert: ", id.status().message()));
    }
    alert_notifier.Kick();
  };
  auto bus = apollo::bus::OpenEventBus(config.bus, bus_options, st, clock);
  if (bus.ok()) {
    if (apollo::Status s = (*bus)->Start(); !s.ok()) bus = s;
  }
  if (!bus.ok()) {
    apollo::log::Error(
        Msg("cannot start the event bus ", config.bus, ": ", bus.status().message()));
    return 1;
  }
  brain.SetEventBus(bus->get());
  // Who leads (leadership.h): started once the server listens.
  apollo::orchestrator::LeadershipOptions lead;
  lead.single = single;
  lead.ttl = config.replication.lease_ttl;
  lead.log = [](const std::string& line) { apollo::log::Info(line); };
  // The leader's own work starts on a thread of its own: subscribing the
  // NATS consumers takes round trips that must not hold up the lease's
  // renewals. Once per process (a deposed leader restarts).
  std::thread leader_work;
  lead.on_elected = [&](int64_t) {
    leader_work = std::thread([&] {
      if (apollo::Status s = (*bus)->StartConsumers(); !s.ok()) {
        apollo::log::Error(Msg("cannot start consuming events: ", s.message()));
      }
      alert_notifier.Start();
      retention_runner.Start();
      // A replica taking over dispatches at once; a single orchestrator
      // keeps its usual first pass, one dispatch interval after start.
      if (!single) brain.Kick();
    });
  };
  lead.on_deposed = [](const std::string& why) { RestartAsFollower(why); };
  apollo::orchestrator::Leadership leadership(lead, st, clock);
  brain.SetLeadership(&leadership);
  runtime.gateway.log = [](const std::string& line) { apollo::log::Info(line); };
  apollo::orchestrator::GatewayService gateway(brain, clock, runtime.gateway);  // `limits:` bounds
  // Operator tokens and the audit trail (access_control.h).
  apollo::orchestrator::AccessControl access(
      st, clock, runtime.acl, [](const std::string& line) { apollo::log::Info(line); });
  if (access.enabled()) {
    auto tokens = st.ListTokens();
    if (tokens.ok() && tokens->empty()) {
      apollo::log::Info(
          "operator tokens are required and none exists yet: run "
          "apollo-cli acl bootstrap (once) to make the first admin token");
    }
  }
  apollo::orchestrator::ApiService api(st, brain, clock, access);
  api.SetEventBus(bus->get());  // dlq and bus status commands
  api.SetStoreUrl(config.store);  // store backup (backup_api.cc)

  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen.ToString(), credentials, &port);
  builder.RegisterService(&gateway);
  builder.RegisterService(&api);
  builder.SetMaxReceiveMessageSize(16 << 20);
  // Agents ping every heartbeat interval (>= 1 s) to notice a dead link;
  // gRPC's default policy (one ping per 5 minutes) would answer that with
  // GOAWAY too_many_pings. The center does not ping them back every
  // interval (a timer, a write and a read per agent per interval, a third of
  // an idle fleet's CPU): a session that sends nothing for two and a half
  // heartbeat intervals is ended by the gateway's silence watch
  // (silence_watch.h). The keepalive timeout still sets TCP_USER_TIMEOUT on
  // accepted sockets, so data the center sent into a cut link (the end of
  // a silent session) fails the socket after one interval and frees it; a
  // rare ping (every 5 minutes) catches a dead transport with nothing to send.
  const int heartbeat_ms = static_cast<int>(
      std::max<int64_t>(1000, std::chrono::duration_cast<std::chrono::milliseconds>(
                                  config.heartbeat_interval)
                                  .count()));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 500);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, std::max(heartbeat_ms, 300'000));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, heartbeat_ms);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // No BDP probe: it answers received data (a heartbeat) with a ping and a
  // timer, to grow flow-control windows for bulk transfers we do not have.
  // Without it the windows stay at 64 KiB per stream, which also bounds what
  // a session the center stopped reading (back-pressure) can push at it.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    apollo::log::Error(Msg("cannot listen on ", config.listen.ToString(),
                           " (address in use, or not an address of this host?)"));
    return 1;
  }
  // The HTTP server (http.listen): /healthz, /readyz, /metrics, JSON API.
  std::unique_ptr<apollo::orchestrator::http::OrchestratorHttp> http;
  if (runtime.http.enabled) {
    if (runtime.http.ui_dir.empty()) {
      // The dashboard as `make ui` builds it in a checkout: bin/../web/dist.
      std::error_code ec;
      std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
      if (!ec) runtime.http.ui_dir = (exe.parent_path().parent_path() / "web" / "dist").string();
    }
    auto h = apollo::orchestrator::http::OrchestratorHttp::Start(
        {runtime.http, runtime.tls, server.get(), &st, &brain, bus->get(), &access, &metrics,
         &clock, [](const std::string& line) { apollo::log::Info(line); },
         gateway.traffic().get()});
    if (!h.ok() &&
        (!runtime.http.DefaultAddress() || h.status().code() != apollo::StatusCode::kUnavailable)) {
      apollo::log::Error(h.status().message());
      server->Shutdown(std::chrono::system_clock::now());
      (*bus)->Stop();
      return 1;
    }
    if (!h.ok()) {
      apollo::log::Warning(Msg("the HTTP server is off: ", h.status().message(),
                               " (set http.listen or --http-listen to choose an address)"));
    } else {
      http = std::move(*h);
    }
  }
  if (http) {
    apollo::log::Info(
        Msg("HTTP on ", (http->tls() ? "https://" : "http://"), runtime.http.listen.host, ":",
            http->port(), " (/healthz /readyz /metrics /api/v1; ",
            (http->serves_ui()
                 ? "the dashboard at /"
                 : "no dashboard: no directory " + runtime.http.ui_dir + ", make ui builds it"),
            ")"));
  }
  brain.Start();
  callbacks.Start();
  // This replica's name and where agents reach it.
  const apollo::HostPort advertised = config.replication.advertise.value_or(apollo::HostPort{
      (config.listen.host == "0.0.0.0" || config.listen.host == "::") ? HostName()
                                                                      : config.listen.host,
      static_cast<uint16_t>(port)});
  const std::string replica_id = !config.replication.replica_id.empty()
                                     ? config.replication.replica_id
                                     : HostName() + ":" + std::to_string(port);
  leadership.Start(replica_id, advertised.ToString());
  apollo::log::Info(Msg("release ", apollo::kVersion, ", listening on ", config.listen.host, ":",
                        port, ", store ", config.store, ", bus ", config.bus,
                        (single ? ""
                                : ", replica " + replica_id + " (" +
                                      (leadership.leader() ? "leader" : "follower") + ")"),
                        (config.tls.complete() ? ", mutual TLS" : ", plaintext (no TLS)"),
                        (access.enabled() ? ", operator tokens required"
                                          : ", no operator tokens (anyone "
                                            "reaching the port is an admin)")));

  // Wait for SIGTERM/SIGINT on this thread (blocked everywhere else).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int sig = 0;
  sigwait(&set, &sig);
  apollo::log::Info(Msg((sig == SIGINT ? "SIGINT" : "SIGTERM"),
                        ", shutting down (in-flight commits finish; agents will reconnect)"));
  if (http) http->Stop();
  leadership.Stop();  // a follower takes over now, not after the lease
  if (leader_work.joinable()) leader_work.join();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  retention_runner.Stop();
  brain.Stop();
  callbacks.Stop();
  alert_notifier.Stop();
  (*bus)->Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  g_argv = argv;
  apollo::ApplyGrpcProcessSettings();
  // One socket per agent: lift the soft limit on open files to the hard one
  // (often 1,024 soft against far more hard), so a fleet of thousands is
  // not refused for want of descriptors.
  if (rlimit nofile{};
      getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);  // once, before any thread (libcurl's rule)
  // Block the stop signals before any thread starts, so only sigwait sees them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
#ifdef APOLLO_TEST_HOOKS
  // The test build only (build/*/test-bin/orchestrator): planted bugs from
  // APOLLO_TEST_* for the chaos checker's own tests.
  apollo::store::TestSwitches::Install(apollo::store::testing::TestSwitchesFromEnvironment());
#endif

  CLI::App app{"Apollo-11 orchestrator: the center of a fleet"};
  app.set_version_flag("--version", apollo::VersionLine("orchestrator"));
  std::string config_path;
  apollo::orchestrator::OrchestratorOverrides overrides;
  app.add_option("--config,-c", config_path, "configuration file (YAML)");
  app.add_option("--listen", overrides.listen, "host:port for agents and operators (default 127.0.0.1:7011)");
  app.add_option("--store", overrides.store, "state store URL: sqlite://PATH or postgresql://...");
  app.add_option("--bus", overrides.bus, "event bus: embedded or nats://host:port");
  app.add_option("--http-listen", overrides.http_listen,
                 "host:port of the HTTP server (/metrics, /healthz, JSON API; default "
                 "127.0.0.1:7080), or off");
  app.add_option("--replica-id", overrides.replica_id,
                 "this orchestrator's name among several sharing a PostgreSQL store (default: "
                 "host name:port)");
  app.add_option("--advertise", overrides.advertise,
                 "host:port where agents and operators reach this replica (default: the listen "
                 "address)");
  app.add_option("--log-format", overrides.log_format,
                 "text (default) or json: one JSON object per log line, with task_id, node_id, "
                 "attempt when the line is about a task");
  app.add_option("--http-ui-dir", overrides.http_ui_dir,
                 "the dashboard's files, served at / (default: ../web/dist beside this "
                 "binary's directory)");
  app.add_option("--tls-cert", overrides.tls_cert,
                 "this server's certificate (PEM); with --tls-key and --tls-ca: mutual TLS");
  app.add_option("--tls-key", overrides.tls_key, "the private key of --tls-cert (PEM)");
  app.add_option("--tls-ca", overrides.tls_ca,
                 "CA certificate (PEM) that agents' and operators' certificates must chain to");
  app.add_flag("--acl", overrides.acl,
               "require operator tokens (on by default with TLS; config acl.enabled)");
  app.add_flag("--insecure", overrides.insecure,
               "allow a non-loopback --listen without TLS and tokens (anyone reaching the port "
               "is trusted)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto config = apollo::orchestrator::LoadOrchestratorConfig(config_path, overrides);
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 2;
  }
  apollo::log::Init("orchestrator", config->log_format == "json" ? apollo::log::Format::kJson
                                                                 : apollo::log::Format::kText);
  apollo::orchestrator::ExposureVerdict exposure = apollo::orchestrator::CheckExposure(*config);
  if (!exposure.status.ok()) {
    apollo::log::Error(exposure.status.message());
    return 2;
  }
  for (const std::string& w : exposure.warnings) apollo::log::Info(w);
  return Run(*config);
}
