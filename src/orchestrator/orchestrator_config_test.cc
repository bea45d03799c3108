#include "orchestrator/orchestrator_config.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>

namespace apollo::orchestrator {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

OrchestratorOverrides Overrides(std::optional<std::string> listen,
                                std::optional<std::string> store,
                                std::optional<std::string> bus) {
  OrchestratorOverrides o;
  o.listen = std::move(listen);
  o.store = std::move(store);
  o.bus = std::move(bus);
  return o;
}

std::string Joined(const ParsedOrchestratorConfig& p) {
  std::string out;
  for (const auto& d : p.errors) out += d.ToString() + "\n";
  return out;
}

TEST(OrchestratorConfigTest, EmptyFileGivesDefaults) {
  ParsedOrchestratorConfig p = ParseOrchestratorConfig("", "o.yaml");
  ASSERT_TRUE(p.ok()) << Joined(p);
  const OrchestratorConfig& c = p.config;
  EXPECT_EQ(c, OrchestratorConfig{});
  EXPECT_EQ(c.listen.ToString(), "127.0.0.1:7011");
  EXPECT_EQ(c.store, "sqlite://./var/apollo.db");
  EXPECT_EQ(c.bus, "embedded");
  EXPECT_EQ(c.dispatch_interval, Duration(1s));
  EXPECT_EQ(c.state_sync_interval, Duration(300s));
  EXPECT_EQ(c.ack_timeout, Duration(10s));
  EXPECT_EQ(c.heartbeat_interval, Duration(10s));
  EXPECT_EQ(c.suspect_after, Duration(30s));
  EXPECT_EQ(c.lost_after, Duration(60s));
  EXPECT_EQ(c.retry_presets.at("fast"), RetryPolicy::Fast());
  EXPECT_EQ(c.retry_presets.at("slow"), RetryPolicy::Slow());
  EXPECT_EQ(c.queue.capacity, 10'000);
  EXPECT_EQ(c.retention.dedup, Duration(24h));
  EXPECT_EQ(SqliteSyncName(c.store_options.synchronous), "FULL");
}

TEST(OrchestratorConfigTest, EveryKeyParses) {
  ParsedOrchestratorConfig p = ParseOrchestratorConfig(R"(listen: 0.0.0.0:9000
store: postgresql://apollo@db:5432/apollo_state
bus: nats://127.0.0.1:4222
dispatch_interval: 250ms
state_sync_interval: 5m
ack_timeout: 20s
heartbeat_interval: 5
suspect_after: 15
lost_after: 2m
execution_extension: {extend_by: 10m, max_extensions: 3}
retry_presets:
  fast: {max_retries: 2}
  nightly: {max_retries: 10, initial_interval: 1m, max_interval: 1h, backoff: exponential, jitter: true}
admission: {max_new_sessions_per_s: 20}
circuit_breaker: {failures: 3, cool_down: 1m}
retry_budget: {rate_per_s: 2.5, burst: 10}
queue: {capacity: 500, alert_at: 0.5, pause_at: 1}
retention: {dedup: 48h, history: 30d}
store_options: {synchronous: NORMAL, batch_max: 200}
bus_options: {partitions: 4, max_deliver: 9}
callbacks: {timeout: 2s, max_attempts: 3}
)",
                                                       "o.yaml");
  ASSERT_TRUE(p.ok()) << Joined(p);
  const OrchestratorConfig& c = p.config;
  EXPECT_EQ(c.listen.ToString(), "0.0.0.0:9000");
  EXPECT_EQ(c.store, "postgresql://apollo@db:5432/apollo_state");
  EXPECT_EQ(c.bus, "nats://127.0.0.1:4222");
  EXPECT_EQ(c.dispatch_interval, Duration(250ms));
  EXPECT_EQ(c.state_sync_interval, Duration(5min));
  EXPECT_EQ(c.ack_timeout, Duration(20s));
  EXPECT_EQ(c.heartbeat_interval, Duration(5s));
  EXPECT_EQ(c.suspect_after, Duration(15s));
  EXPECT_EQ(c.lost_after, Duration(2min));
  EXPECT_EQ(c.execution_extension.extend_by, Duration(10min));
  EXPECT_EQ(c.execution_extension.max_extensions, 3);
  EXPECT_EQ(c.retry_presets.size(), 3u);
  EXPECT_EQ(c.retry_presets.at("fast").max_retries, 2);
  EXPECT_EQ(c.retry_presets.at("slow"), RetryPolicy::Slow());
  const RetryPolicy& nightly = c.retry_presets.at("nightly");
  EXPECT_EQ(nightly.max_retries, 10);
  EXPECT_EQ(nightly.initial_interval, 60s);
  EXPECT_EQ(nightly.max_interval, 3600s);
  EXPECT_EQ(nightly.backoff, Backoff::kExponential);
  EXPECT_TRUE(nightly.jitter);
  EXPECT_EQ(c.admission.max_new_sessions_per_s, 20);
  EXPECT_EQ(c.circuit_breaker.failures, 3);
  EXPECT_EQ(c.circuit_breaker.cool_down, Duration(1min));
  EXPECT_EQ(c.retry_budget.rate_per_s, 2.5);
  EXPECT_EQ(c.retry_budget.burst, 10);
  EXPECT_EQ(c.queue.capacity, 500);
  EXPECT_EQ(c.queue.alert_at, 0.5);
  EXPECT_EQ(c.queue.pause_at, 1.0);
  EXPECT_EQ(c.retention.history, Duration(720h));
  EXPECT_EQ(c.store_options.synchronous, SqliteSync::kNormal);
  EXPECT_EQ(c.store_options.batch_max, 200);
  EXPECT_EQ(c.bus_options.partitions, 4);
  EXPECT_EQ(c.bus_options.max_deliver, 9);
  EXPECT_EQ(c.callbacks.timeout, Duration(2s));
  EXPECT_EQ(c.callbacks.max_attempts, 3);
}

TEST(OrchestratorConfigTest, StoreAndBusUrls) {
  EXPECT_TRUE(CheckStoreUrl("sqlite://./var/apollo.db").ok());
  EXPECT_TRUE(CheckStoreUrl("sqlite:///var/lib/apollo/apollo.db").ok());
  EXPECT_TRUE(CheckStoreUrl("postgresql://localhost/apollo").ok());
  EXPECT_TRUE(CheckStoreUrl("postgres://u@h:5432/d?sslmode=require").ok());
  EXPECT_FALSE(CheckStoreUrl("sqlite://").ok());
  EXPECT_FALSE(CheckStoreUrl("./apollo.db").ok());
  EXPECT_FALSE(CheckStoreUrl("mysql://h/d").ok());
  EXPECT_FALSE(CheckStoreUrl("").ok());
  EXPECT_TRUE(CheckBusUrl("embedded").ok());
  EXPECT_TRUE(CheckBusUrl("nats://127.0.0.1:4222").ok());
  EXPECT_FALSE(CheckBusUrl("nats://127.0.0.1").ok());
  EXPECT_FALSE(CheckBusUrl("Embedded").ok());
  EXPECT_FALSE(CheckBusUrl("").ok());
}

TEST(OrchestratorConfigTest, OverridesApplyAndBadOnesLeaveTheConfigAlone) {
  OrchestratorConfig c;
  ASSERT_TRUE(ApplyOrchestratorOverrides(c, Overrides("0.0.0.0:7100", "sqlite:///tmp/a.db",
                                                       "nats://n1:4222"))
                  .ok());
  EXPECT_EQ(c.listen.ToString(), "0.0.0.0:7100");
  EXPECT_EQ(c.store, "sqlite:///tmp/a.db");
  EXPECT_EQ(c.bus, "nats://n1:4222");

  OrchestratorConfig d;
  Status s = ApplyOrchestratorOverrides(d, Overrides("7011", "apollo.db", "nats://x:0"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "--listen: '7011' has no port; expected host:port such as 127.0.0.1:7011\n"
            "--store: 'apollo.db' is not a store URL; for a SQLite file write sqlite://<path> "
            "(e.g. sqlite://./var/apollo.db)\n"
            "--bus: nats: 'x:0' has a port outside 1..65535; expected host:port such as "
            "127.0.0.1:7011");
  EXPECT_EQ(d, OrchestratorConfig{});

  // Port 0 (any free port) is fine to listen on, in the file too; the e2e
  // tests use it. Not for the bus, which is dialled.
  ASSERT_TRUE(ApplyOrchestratorOverrides(d, Overrides("127.0.0.1:0", std::nullopt, std::nullopt))
                  .ok());
  EXPECT_EQ(d.listen.port, 0);
  EXPECT_TRUE(ParseOrchestratorConfig("listen: 127.0.0.1:0\n", "o.yaml").ok());
  EXPECT_FALSE(CheckBusUrl("nats://127.0.0.1:0").ok());
}

class OrchestratorConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/apollo-orch-config-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(OrchestratorConfigFileTest, NoPathMeansDefaultsAndAMissingFileIsAnError) {
  auto none = LoadOrchestratorConfig("", Overrides(std::nullopt, "sqlite://./x.db", std::nullopt));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->store, "sqlite://./x.db");
  EXPECT_EQ(none->listen.ToString(), "127.0.0.1:7011");

  auto missing = LoadOrchestratorConfig((dir_ / "nope.yaml").string(), {});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST_F(OrchestratorConfigFileTest, BadFileGivesEveryDiagnosticAndOverridesWinOverTheFile) {
  fs::path p = dir_ / "o.yaml";
  std::ofstream(p) << "listen: 127.0.0.1:7011\nack_timeout: 0\nlost_after: 10\n";
  auto bad = LoadOrchestratorConfig(p.string(), {});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            p.string() + ":2:14: 'ack_timeout' must be between 1s and 1h, got 0\n" +
                p.string() + ":3:13: 'lost_after' (10s) must be longer than 'suspect_after' (30s)");

  std::ofstream(p) << "listen: 127.0.0.1:7011\n";
  auto good = LoadOrchestratorConfig(p.string(), Overrides("127.0.0.1:7999", std::nullopt, std::nullopt));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->listen.port, 7999);
}

TEST(OrchestratorConfigTest, TlsBlockNeedsAllThreePaths) {
  ParsedOrchestratorConfig good = ParseOrchestratorConfig(
      "tls:\n  cert: /etc/apollo/server.pem\n  key: server-key.pem\n  ca: /etc/apollo/ca.pem\n",
      "o.yaml");
  ASSERT_TRUE(good.ok()) << Joined(good);
  EXPECT_EQ(good.config.tls,
            (tls::TlsPaths{"/etc/apollo/server.pem", "server-key.pem", "/etc/apollo/ca.pem"}));

  ParsedOrchestratorConfig partial =
      ParseOrchestratorConfig("listen: 127.0.0.1:7011\ntls:\n  cert: /a.pem\n", "o.yaml");
  EXPECT_EQ(Joined(partial),
            "o.yaml:3:3: 'tls' needs cert, key and ca together; missing: key, ca\n");
  EXPECT_FALSE(partial.config.tls.any());

  ParsedOrchestratorConfig typo = ParseOrchestratorConfig(
      "tls: {cert: /a.pem, key: /k.pem, ca: /c.pem, crt: /x.pem}\n", "o.yaml");
  EXPECT_EQ(Joined(typo), "o.yaml:1:46: unknown field 'crt' in tls; did you mean 'cert'?\n");
  EXPECT_EQ(Joined(ParseOrchestratorConfig("tls: /etc/apollo\n", "o.yaml")),
            "o.yaml:1:6: 'tls' must be a mapping (ca, cert, key), got '/etc/apollo'\n");
  EXPECT_EQ(Joined(ParseOrchestratorConfig("tls: {cert: '', key: /k, ca: /c}\n", "o.yaml")),
            "o.yaml:1:13: 'tls.cert' must not be empty\n");
}

TEST(OrchestratorConfigTest, TlsFlagsOverrideTheFileAndGoTogether) {
  OrchestratorConfig c;
  c.tls = {"/file/server.pem", "/file/server-key.pem", "/file/ca.pem"};
  OrchestratorOverrides o;
  o.tls_cert = "/flag/server.pem";
  ASSERT_TRUE(ApplyOrchestratorOverrides(c, o).ok());
  EXPECT_EQ(c.tls, (tls::TlsPaths{"/flag/server.pem", "/file/server-key.pem", "/file/ca.pem"}));

  OrchestratorConfig d;
  OrchestratorOverrides two;
  two.tls_cert = "/s.pem";
  two.tls_ca = "/ca.pem";
  Status s = ApplyOrchestratorOverrides(d, two);
  EXPECT_EQ(s.message(),
            "TLS needs --tls-cert, --tls-key and --tls-ca together (or all three in the config's "
            "tls block); missing: --tls-key");
  EXPECT_EQ(d, OrchestratorConfig{});
  two.tls_key = "";
  EXPECT_EQ(ApplyOrchestratorOverrides(d, two).message(), "--tls-key: the path is empty");

  OrchestratorOverrides insecure;
  insecure.insecure = true;
  ASSERT_TRUE(ApplyOrchestratorOverrides(d, insecure).ok());
  EXPECT_TRUE(d.insecure);
}

TEST(OrchestratorConfigTest, NonLoopbackNeedsTlsOrInsecure) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "10.0.0.5", "orch.example.com", "127.0.0.1.nip.io",
                           "::ffff:127.0.0.1", "128.0.0.1"}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
  OrchestratorConfig c;
  ExposureVerdict local = CheckExposure(c);  // 127.0.0.1: fine without TLS
  EXPECT_TRUE(local.status.ok());
  EXPECT_TRUE(local.warnings.empty());

  c.listen = {"0.0.0.0", 7011};
  ExposureVerdict open = CheckExposure(c);
  EXPECT_EQ(open.status.code(), StatusCode::kFailedPrecondition);
  for (const char* flag : {"--tls-cert", "--tls-key", "--tls-ca", "--insecure", "0.0.0.0:7011"}) {
    EXPECT_NE(open.status.message().find(flag), std::string::npos) << flag;
  }
  EXPECT_EQ(open.status.message().find('\n'), std::string::npos);  // one line

  c.insecure = true;
  ExposureVerdict risky = CheckExposure(c);
  EXPECT_TRUE(risky.status.ok());
  ASSERT_EQ(risky.warnings.size(), 1u);
  EXPECT_EQ(risky.warnings[0].rfind("WARNING: --insecure: serving 0.0.0.0:7011 without TLS", 0),
            0u);

  c.insecure = false;
  c.tls = {"/s.pem", "/k.pem", "/ca.pem"};
  EXPECT_TRUE(c.AclEnabled());  // tokens come on with TLS
  ExposureVerdict secured = CheckExposure(c);
  EXPECT_TRUE(secured.status.ok());
  EXPECT_TRUE(secured.warnings.empty());

  // TLS with tokens turned off: still refused off loopback.
  c.acl_enabled = false;
  ExposureVerdict no_tokens = CheckExposure(c);
  EXPECT_EQ(no_tokens.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(no_tokens.status.message().find("without operator tokens"), std::string::npos)
      << no_tokens.status.message();
  EXPECT_NE(no_tokens.status.message().find("acl"), std::string::npos);

  // Tokens without TLS on loopback: allowed, with a warning that they travel
  // in plaintext.
  OrchestratorConfig local_acl;
  OrchestratorOverrides acl;
  acl.acl = true;
  ASSERT_TRUE(ApplyOrchestratorOverrides(local_acl, acl).ok());
  EXPECT_TRUE(local_acl.AclEnabled());
  ExposureVerdict plain_tokens = CheckExposure(local_acl);
  EXPECT_TRUE(plain_tokens.status.ok());
  ASSERT_EQ(plain_tokens.warnings.size(), 1u);
  EXPECT_NE(plain_tokens.warnings[0].find("plaintext"), std::string::npos);
}

TEST(OrchestratorConfigTest, AclBlock) {
  auto p = ParseOrchestratorConfig("acl:\n  enabled: false\n", "o.yaml");
  ASSERT_TRUE(p.ok());
  p.config.tls = {"/s.pem", "/k.pem", "/ca.pem"};
  EXPECT_FALSE(p.config.AclEnabled());  // the file wins over the TLS default
  p = ParseOrchestratorConfig("acl:\n  enabled: maybe\n", "o.yaml");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 2);
  p = ParseOrchestratorConfig("acl:\n  enable: true\n", "o.yaml");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_NE(p.errors[0].message.find("enabled"), std::string::npos) << p.errors[0].message;
}

TEST(OrchestratorConfigTest, HttpBlockAndFlag) {
  OrchestratorConfig d;
  EXPECT_TRUE(d.http.enabled);
  EXPECT_EQ(d.http.listen.ToString(), kDefaultHttpListen);
  EXPECT_TRUE(d.http.DefaultAddress());
  auto p = ParseOrchestratorConfig("http:\n  listen: 127.0.0.1:0\n  threads: 8\n", "o.yaml");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.config.http.listen.port, 0);
  EXPECT_EQ(p.config.http.threads, 8);
  EXPECT_FALSE(p.config.http.DefaultAddress());
  for (const char* off : {"http:\n  listen: off\n", "http:\n  listen: \"\"\n"}) {
    p = ParseOrchestratorConfig(off, "o.yaml");
    ASSERT_TRUE(p.ok()) << off;
    EXPECT_FALSE(p.config.http.enabled) << off;
  }
  p = ParseOrchestratorConfig("http:\n  listen: nowhere\n  threads: 0\n", "o.yaml");
  ASSERT_EQ(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0].line, 2);
  EXPECT_EQ(p.errors[1].line, 3);

  OrchestratorOverrides o;
  o.http_listen = "off";
  ASSERT_TRUE(ApplyOrchestratorOverrides(d, o).ok());
  EXPECT_FALSE(d.http.enabled);
  o.http_listen = "127.0.0.1:9999";
  ASSERT_TRUE(ApplyOrchestratorOverrides(d, o).ok());
  EXPECT_TRUE(d.http.enabled);
  EXPECT_EQ(d.http.listen.port, 9999);
  o.http_listen = "127.0.0.1:notaport";
  Status bad = ApplyOrchestratorOverrides(d, o);
  EXPECT_EQ(bad.message().rfind("--http-listen: ", 0), 0u) << bad.message();
  EXPECT_EQ(d.http.listen.port, 9999);  // unchanged
}

// The HTTP server serves the operator API too: the same exposure rule.
TEST(OrchestratorConfigTest, NonLoopbackHttpNeedsTlsAndTokensOrInsecure) {
  OrchestratorConfig c;
  c.http.listen = {"0.0.0.0", 7080};
  ExposureVerdict open = CheckExposure(c);
  EXPECT_EQ(open.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(open.status.message().find("0.0.0.0:7080 (--http-listen)"), std::string::npos)
      << open.status.message();
  c.http.enabled = false;  // off: nothing to refuse
  EXPECT_TRUE(CheckExposure(c).status.ok());
  c.http.enabled = true;
  c.tls = {"/s.pem", "/k.pem", "/ca.pem"};
  EXPECT_TRUE(CheckExposure(c).status.ok());
  c.tls = {};
  c.insecure = true;
  ExposureVerdict risky = CheckExposure(c);
  EXPECT_TRUE(risky.status.ok());
  ASSERT_EQ(risky.warnings.size(), 1u);
  EXPECT_NE(risky.warnings[0].find("--http-listen"), std::string::npos);
}

// config/orchestrator.yaml shows every key at its default.
TEST(OrchestratorConfigTest, ExampleFileLoadsAndHoldsTheDefaults) {
  auto r = LoadOrchestratorConfig("config/orchestrator.yaml", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, OrchestratorConfig{});
}

TEST(OrchestratorConfigTest, BadFilesGiveTheExpectedDiagnostics) {
  const fs::path dir = "tests/data/bad_config";
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".yaml" || name.rfind("orchestrator_", 0) != 0) continue;
    fs::path expected_path = entry.path();
    expected_path.replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expected_path)) << expected_path << " is missing";
    ParsedOrchestratorConfig p = ParseOrchestratorConfig(ReadAll(entry.path()), name);
    EXPECT_FALSE(p.ok()) << name << " parsed as valid";
    EXPECT_EQ(Joined(p), ReadAll(expected_path)) << "diagnostics for " << name;
    ++cases;
  }
  EXPECT_GE(cases, 5);
}

}  // namespace
}  // namespace apollo::orchestrator
