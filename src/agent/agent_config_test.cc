#include "agent/agent_config.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "agent/handlers/registry.h"

namespace apollo::agent {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

AgentOverrides WithNodeId(std::string id) {
  AgentOverrides o;
  o.node_id = std::move(id);
  return o;
}

std::string Joined(const ParsedAgentConfig& p) {
  std::string out;
  for (const auto& d : p.errors) out += d.ToString() + "\n";
  return out;
}

std::vector<std::string> Addresses(const AgentConfig& c) {
  std::vector<std::string> out;
  for (const HostPort& hp : c.orchestrators) out.push_back(hp.ToString());
  return out;
}

constexpr const char* kFull = R"(node_id: edge-7
labels: {role: worker, zone: eu-west/1}
groups: [canary, batch]
orchestrator: center.example.net:9000
state_dir: /var/lib/apollo
wal_path: /disk2/wal
heartbeat_interval: 5s
max_concurrency: 16
autonomy_window: 2m
state_sync_interval: 1h
handlers: {upgrade_service: /usr/lib/apollo/upgrade}
enabled_intents: [noop, exec]
exec: {allowed_commands: [/usr/bin/systemctl, "/opt/app/bin/*"]}
ensure_file:
  allowed_dirs: [/etc/app/, /srv/www]
  allow_special_modes: true
kill_grace: 0
final_event_hold_ms: 50
metrics_paths: [/, /data]
reconnect: {initial_backoff_ms: 100, max_backoff_ms: 5000}
wal: {segment_size_mb: 8, retention_hours: 24, archive_dir: /archive}
)";

TEST(AgentConfigTest, EmptyFileGivesDefaults) {
  ParsedAgentConfig p = ParseAgentConfig("", "a.yaml", 4);
  ASSERT_TRUE(p.ok()) << Joined(p);
  EXPECT_EQ(p.config, DefaultAgentConfig(4));
  const AgentConfig& c = p.config;
  EXPECT_EQ(c.max_concurrency, 8);
  EXPECT_EQ(Addresses(c), std::vector<std::string>{"127.0.0.1:7011"});
  EXPECT_EQ(c.state_dir, "./var/agent");
  EXPECT_EQ(c.heartbeat_interval, Duration(10s));
  EXPECT_EQ(c.autonomy_window, Duration(60s));
  EXPECT_EQ(c.state_sync_interval, Duration(300s));
  EXPECT_EQ(c.kill_grace, Duration(5s));
  EXPECT_EQ(c.final_event_hold, Duration(2ms));
  EXPECT_EQ(c.metrics_paths, std::vector<std::string>{"/"});
  EXPECT_EQ(c.reconnect.initial_backoff, Duration(500ms));
  EXPECT_EQ(c.reconnect.max_backoff, Duration(30s));
  EXPECT_EQ(c.wal.segment_size_mb, 64);
  EXPECT_EQ(c.wal.retention, Duration(168h));
  EXPECT_EQ(c.enabled_intents,
            (std::vector<std::string>{"collect_metrics", "ensure_file", "noop", "sleep"}));
  EXPECT_TRUE(c.exec.allowed_commands.empty());
  EXPECT_TRUE(c.ensure_file.allowed_dirs.empty());
  EXPECT_FALSE(c.ensure_file.allow_special_modes);
}

TEST(AgentConfigTest, MaxConcurrencyDefaultIsTwiceTheInjectedCoresWithinBounds) {
  EXPECT_EQ(DefaultAgentConfig(1).max_concurrency, 2);
  EXPECT_EQ(DefaultAgentConfig(0).max_concurrency, 2);
  EXPECT_EQ(DefaultAgentConfig(-3).max_concurrency, 2);
  EXPECT_EQ(DefaultAgentConfig(4096).max_concurrency, 1024);
}

TEST(AgentConfigTest, BuiltinListMatchesTheHandlerRegistry) {
  EXPECT_EQ(BuiltinIntents(), BuiltinIntentNames());
  EXPECT_EQ(DefaultEnabledIntents(), DefaultEnabledBuiltins());
}

TEST(AgentConfigTest, EveryKeyParses) {
  ParsedAgentConfig p = ParseAgentConfig(kFull, "a.yaml", 2);
  ASSERT_TRUE(p.ok()) << Joined(p);
  const AgentConfig& c = p.config;
  EXPECT_EQ(c.node_id, "edge-7");
  EXPECT_EQ(c.labels, (std::map<std::string, std::string>{{"role", "worker"},
                                                          {"zone", "eu-west/1"}}));
  EXPECT_EQ(c.groups, (std::vector<std::string>{"canary", "batch"}));
  EXPECT_EQ(Addresses(c), std::vector<std::string>{"center.example.net:9000"});
  EXPECT_EQ(c.state_dir, "/var/lib/apollo");
  EXPECT_EQ(c.wal_path, "/disk2/wal");
  EXPECT_EQ(c.heartbeat_interval, Duration(5s));
  EXPECT_EQ(c.max_concurrency, 16);
  EXPECT_EQ(c.autonomy_window, Duration(120s));
  EXPECT_EQ(c.state_sync_interval, Duration(1h));
  EXPECT_EQ(c.handlers.at("upgrade_service"), "/usr/lib/apollo/upgrade");
  EXPECT_EQ(c.enabled_intents, (std::vector<std::string>{"noop", "exec"}));
  EXPECT_EQ(c.exec.allowed_commands,
            (std::vector<std::string>{"/usr/bin/systemctl", "/opt/app/bin/*"}));
  EXPECT_EQ(c.ensure_file.allowed_dirs, (std::vector<std::string>{"/etc/app", "/srv/www"}));
  EXPECT_TRUE(c.ensure_file.allow_special_modes);
  EXPECT_EQ(c.kill_grace, Duration(0));
  EXPECT_EQ(c.final_event_hold, Duration(50ms));
  EXPECT_EQ(c.metrics_paths, (std::vector<std::string>{"/", "/data"}));
  EXPECT_EQ(c.reconnect.initial_backoff, Duration(100ms));
  EXPECT_EQ(c.reconnect.max_backoff, Duration(5s));
  EXPECT_EQ(c.wal.segment_size_mb, 8);
  EXPECT_EQ(c.wal.retention, Duration(24h));
  EXPECT_EQ(c.wal.archive_dir, "/archive");
}

TEST(AgentConfigTest, ReportsEveryProblemWithItsPosition) {
  ParsedAgentConfig p = ParseAgentConfig(
      "node_id: 'a b'\nheartbeat_intervl: 10\nautonomy_window: 10\nmax_concurrency: 0\n",
      "edge.yaml", 2);
  EXPECT_EQ(Joined(p),
            "edge.yaml:1:10: 'node_id' 'a b' is not a valid name: letters, digits, '.', '_', "
            "'-', 1 to 128 characters\n"
            "edge.yaml:2:1: unknown field 'heartbeat_intervl' in edge-agent config; did you "
            "mean 'heartbeat_interval'?\n"
            "edge.yaml:3:18: 'autonomy_window' must be between 30s and 2m, got 10s\n"
            "edge.yaml:4:18: 'max_concurrency' must be between 1 and 1024, got 0\n");
}

TEST(AgentConfigTest, PolicyProblemsAreReportedWithTheirPosition) {
  ParsedAgentConfig p = ParseAgentConfig(
      "exec: {allowed_commands: [bin/deploy, /usr/bin/../sbin/x, /usr/bin/true, /usr/bin/true]}\n"
      "ensure_file:\n"
      "  allowed_dirs: [/etc/app, etc, /srv/./www, '']\n"
      "  allow_special_modes: sometimes\n"
      "  allowed_dir: [/tmp]\n"
      "exec: {allowed_commands: /usr/bin/true}\n",
      "edge.yaml", 2);
  EXPECT_EQ(Joined(p),
            "edge.yaml:1:27: 'exec.allowed_commands' must be an absolute path, got 'bin/deploy'\n"
            "edge.yaml:1:39: 'exec.allowed_commands' entry '/usr/bin/../sbin/x' must not contain "
            "'.' or '..' components\n"
            "edge.yaml:1:74: '/usr/bin/true' is listed twice in 'exec.allowed_commands'\n"
            "edge.yaml:3:28: 'ensure_file.allowed_dirs' must be an absolute path, got 'etc'\n"
            "edge.yaml:3:33: 'ensure_file.allowed_dirs' entry '/srv/./www' must not contain "
            "'.' or '..' components\n"
            "edge.yaml:3:45: 'ensure_file.allowed_dirs' must not be empty\n"
            "edge.yaml:4:24: 'ensure_file.allow_special_modes' must be true or false\n"
            "edge.yaml:5:3: unknown field 'allowed_dir' in ensure_file; did you mean "
            "'allowed_dirs'?\n"
            "edge.yaml:6:1: duplicate field 'exec' in edge-agent config\n");
  ParsedAgentConfig shape = ParseAgentConfig("exec: [/bin/true]\nensure_file: /tmp\n", "e.yaml", 2);
  EXPECT_EQ(Joined(shape),
            "e.yaml:1:7: 'exec' must be a mapping (allowed_commands), got a list\n"
            "e.yaml:2:14: 'ensure_file' must be a mapping (allowed_dirs, allow_special_modes), "
            "got '/tmp'\n");
}

TEST(AgentConfigTest, EnableIntentAddsBuiltinsOnce) {
  AgentConfig c = DefaultAgentConfig(1);
  AgentOverrides o = WithNodeId("n1");
  o.enable_intents = {"exec", "noop", "exec"};
  ASSERT_TRUE(ApplyAgentOverrides(c, o).ok());
  EXPECT_EQ(c.enabled_intents, (std::vector<std::string>{"collect_metrics", "ensure_file", "noop",
                                                         "sleep", "exec"}));

  AgentConfig d = DefaultAgentConfig(1);
  o.enable_intents = {"exec", "format_disk"};
  Status s = ApplyAgentOverrides(d, o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--enable-intent 'format_disk': not a built-in intent (built-ins: "
                         "collect_metrics, ensure_file, exec, noop, sleep)");
  EXPECT_EQ(d, DefaultAgentConfig(1));  // untouched
}

TEST(AgentConfigTest, OverridesApplyOnTopOfTheFile) {
  ParsedAgentConfig p = ParseAgentConfig(kFull, "a.yaml", 2);
  ASSERT_TRUE(p.ok()) << Joined(p);
  AgentConfig c = p.config;
  AgentOverrides o;
  o.node_id = "edge-8";
  o.labels = {"role=db", "rack=r1"};
  o.groups = {"canary", "night"};
  o.orchestrator = "[::1]:7011";
  o.state_dir = "/tmp/x";
  ASSERT_TRUE(ApplyAgentOverrides(c, o).ok());
  EXPECT_EQ(c.node_id, "edge-8");
  EXPECT_EQ(c.labels, (std::map<std::string, std::string>{
                          {"rack", "r1"}, {"role", "db"}, {"zone", "eu-west/1"}}));
  EXPECT_EQ(c.groups, (std::vector<std::string>{"canary", "batch", "night"}));
  EXPECT_EQ(Addresses(c), std::vector<std::string>{"[::1]:7011"});
  EXPECT_EQ(c.state_dir, "/tmp/x");
  EXPECT_EQ(c.wal_path, "/disk2/wal");  // set in the file: kept
}

TEST(AgentConfigTest, WalPathFollowsTheFinalStateDirUnlessSet) {
  AgentConfig c = DefaultAgentConfig(1);
  AgentOverrides o;
  o.node_id = "n1";
  o.state_dir = "./var/demo/agent-a/";
  ASSERT_TRUE(ApplyAgentOverrides(c, o).ok());
  EXPECT_EQ(c.wal_path, "./var/demo/agent-a/wal");

  AgentConfig d = DefaultAgentConfig(1);
  o.wal_path = "/fast/wal";
  ASSERT_TRUE(ApplyAgentOverrides(d, o).ok());
  EXPECT_EQ(d.wal_path, "/fast/wal");

  AgentConfig e = DefaultAgentConfig(1);
  ASSERT_TRUE(ApplyAgentOverrides(e, WithNodeId("n1")).ok());
  EXPECT_EQ(e.wal_path, "./var/agent/wal");
}

TEST(AgentConfigTest, BadOverridesAreAllReportedNamingTheFlag) {
  AgentConfig c = DefaultAgentConfig(1);
  AgentOverrides o;
  o.node_id = "bad id";
  o.labels = {"role", "=x", "ok=fine", "k=v w"};
  o.groups = {"g!"};
  o.orchestrator = "center:99999";
  o.wal_path = "";
  Status s = ApplyAgentOverrides(c, o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "'--node-id' 'bad id' is not a valid name: letters, digits, '.', '_', '-', 1 to 128 "
            "characters\n"
            "--label 'role': expected key=value, e.g. --label role=worker\n"
            "--label '=x': expected key=value, e.g. --label role=worker\n"
            "'--label value' 'v w' is not a valid name: letters, digits, '.', '_', '-', '/', 1 "
            "to 128 characters\n"
            "'--group' 'g!' is not a valid name: letters, digits, '.', '_', '-', '/', 1 to 128 "
            "characters\n"
            "--orchestrator: 'center:99999' has a port outside 1..65535; expected host:port "
            "such as 127.0.0.1:7011\n"
            "--wal-path: the path is empty");
  EXPECT_EQ(c, DefaultAgentConfig(1));  // untouched
}

// Several replicas (docs/replicas.md): one string, a comma-separated
// string (quoted or not) or a YAML list; all name the same addresses.
TEST(AgentConfigTest, OrchestratorIsOneAddressACommaSeparatedOneOrAList) {
  const std::vector<std::string> three = {"a.example:7011", "b.example:7011", "10.0.0.3:7012"};
  for (const char* yaml :
       {"orchestrator: a.example:7011, b.example:7011,10.0.0.3:7012\n",
        "orchestrator: 'a.example:7011 ,b.example:7011, 10.0.0.3:7012'\n",
        "orchestrator: ['a.example:7011', 'b.example:7011', '10.0.0.3:7012']\n",
        "orchestrator:\n  - a.example:7011\n  - b.example:7011\n  - \"10.0.0.3:7012\"\n"}) {
    ParsedAgentConfig p = ParseAgentConfig(yaml, "a.yaml", 2);
    ASSERT_TRUE(p.ok()) << yaml << Joined(p);
    EXPECT_EQ(Addresses(p.config), three) << yaml;
  }
  ParsedAgentConfig one = ParseAgentConfig("orchestrator: '[::1]:7011'\n", "a.yaml", 2);
  ASSERT_TRUE(one.ok()) << Joined(one);
  EXPECT_EQ(Addresses(one.config), std::vector<std::string>{"[::1]:7011"});
}

TEST(AgentConfigTest, BadOrchestratorEntriesAreReportedWhereTheyAre) {
  // Comma-separated: at the entry's column, quoted or not.
  EXPECT_EQ(Joined(ParseAgentConfig("orchestrator: a:7011, b, a:7011\n", "p.yaml", 2)),
            "p.yaml:1:23: 'orchestrator': 'b' has no port; expected host:port such as "
            "127.0.0.1:7011\n"
            "p.yaml:1:26: 'a:7011' is listed twice in 'orchestrator'\n");
  EXPECT_EQ(Joined(ParseAgentConfig("orchestrator: 'a:7011,,c'\n", "q.yaml", 2)),
            "q.yaml:1:23: 'orchestrator': the address is empty; expected host:port such as "
            "127.0.0.1:7011\n"
            "q.yaml:1:24: 'orchestrator': 'c' has no port; expected host:port such as "
            "127.0.0.1:7011\n");
  // A list: at the entry.
  EXPECT_EQ(
      Joined(ParseAgentConfig("orchestrator:\n  - a:7011\n  - b:99999\n  - ''\n", "l.yaml", 2)),
      "l.yaml:3:5: 'orchestrator': 'b:99999' has a port outside 1..65535; expected "
      "host:port such as 127.0.0.1:7011\n"
      "l.yaml:4:5: 'orchestrator': the address is empty; expected host:port such as "
      "127.0.0.1:7011\n");
  EXPECT_EQ(Joined(ParseAgentConfig("orchestrator: []\n", "e.yaml", 2)),
            "e.yaml:1:15: 'orchestrator' must name at least one host:port\n");
  EXPECT_EQ(Joined(ParseAgentConfig("orchestrator: {a: 1}\n", "m.yaml", 2)),
            "m.yaml:1:15: 'orchestrator' must be host:port, several separated by commas, or a "
            "list of host:port\n");
}

TEST(AgentConfigTest, OrchestratorFlagTakesACommaSeparatedList) {
  AgentConfig c = DefaultAgentConfig(1);
  AgentOverrides o = WithNodeId("n1");
  o.orchestrator = "a:7011, b:7011,c:7011";
  ASSERT_TRUE(ApplyAgentOverrides(c, o).ok());
  EXPECT_EQ(Addresses(c), (std::vector<std::string>{"a:7011", "b:7011", "c:7011"}));

  AgentConfig d = DefaultAgentConfig(1);
  o.orchestrator = "a:7011,b,a:7011,";
  Status s = ApplyAgentOverrides(d, o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "--orchestrator: 'b' has no port; expected host:port such as 127.0.0.1:7011\n"
            "--orchestrator: 'a:7011' is listed twice\n"
            "--orchestrator: the address is empty; expected host:port such as 127.0.0.1:7011");
  EXPECT_EQ(d, DefaultAgentConfig(1));  // untouched
}

TEST(AgentConfigTest, NodeIdIsRequiredFromFileOrCommandLine) {
  AgentConfig c = DefaultAgentConfig(1);
  Status s = ApplyAgentOverrides(c, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "node_id is not set: set 'node_id' in the config file or pass --node-id");
}

class AgentConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/apollo-agent-config-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(AgentConfigFileTest, MissingFileIsFineOnlyWithANodeIdOverride) {
  std::string missing = (dir_ / "edge-agent.yaml").string();
  auto without = LoadAgentConfig(missing, {}, 2);
  EXPECT_EQ(without.status().code(), StatusCode::kNotFound);
  EXPECT_NE(without.status().message().find("pass at least --node-id"), std::string::npos);

  EXPECT_EQ(LoadAgentConfig("", {}, 2).status().message(),
            "no config file given: pass --config FILE, or at least --node-id");
  ASSERT_TRUE(LoadAgentConfig("", WithNodeId("n1"), 2).ok());

  auto with = LoadAgentConfig(missing, WithNodeId("n1"), 2);
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  AgentConfig expected = DefaultAgentConfig(2);
  expected.node_id = "n1";
  expected.wal_path = "./var/agent/wal";
  EXPECT_EQ(*with, expected);
}

TEST_F(AgentConfigFileTest, BadFileGivesEveryDiagnosticInTheStatus) {
  fs::path p = dir_ / "edge.yaml";
  std::ofstream(p) << "node_id: n1\nkill_grace: -1\nwal: {segment_size_mb: 0}\n";
  auto r = LoadAgentConfig(p.string(), {}, 2);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            p.string() + ":2:13: 'kill_grace': '-1' is not a duration; use whole seconds (10) "
                         "or a number with a unit ms, s, m, h, d (500ms, 10s, 2m, 1h30m)\n" +
                p.string() + ":3:24: 'wal.segment_size_mb' must be between 1 and 4096, got 0");
}

// config/edge-agent.yaml shows every key at its default (max_concurrency and
// wal_path commented out: their defaults are derived).
TEST(AgentConfigTest, ExampleFileLoadsAndHoldsTheDefaults) {
  AgentOverrides none;
  auto r = LoadAgentConfig("config/edge-agent.yaml", none, 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  AgentConfig expected = DefaultAgentConfig(3);
  expected.node_id = r->node_id;
  expected.labels = r->labels;
  expected.groups = r->groups;
  expected.wal_path = "./var/agent/wal";
  EXPECT_EQ(*r, expected);
}

TEST(AgentConfigTest, BadFilesGiveTheExpectedDiagnostics) {
  const fs::path dir = "tests/data/bad_config";
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".yaml" || name.rfind("agent_", 0) != 0) continue;
    fs::path expected_path = entry.path();
    expected_path.replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expected_path)) << expected_path << " is missing";
    ParsedAgentConfig p = ParseAgentConfig(ReadAll(entry.path()), name, 2);
    EXPECT_FALSE(p.ok()) << name << " parsed as valid";
    EXPECT_EQ(Joined(p), ReadAll(expected_path)) << "diagnostics for " << name;
    ++cases;
  }
  EXPECT_GE(cases, 5);
}

TEST(AgentConfigTest, TlsFromFileAndFlagsNeedsAllThree) {
  ParsedAgentConfig good = ParseAgentConfig(
      "node_id: w1\ntls: {cert: /etc/apollo/w1.pem, key: /etc/apollo/w1-key.pem, ca: ca.pem}\n",
      "a.yaml", 2);
  ASSERT_TRUE(good.ok()) << Joined(good);
  EXPECT_EQ(good.config.tls,
            (tls::TlsPaths{"/etc/apollo/w1.pem", "/etc/apollo/w1-key.pem", "ca.pem"}));
  EXPECT_EQ(Joined(ParseAgentConfig("tls:\n  cert: /a.pem\n  ca: /c.pem\n", "a.yaml", 2)),
            "a.yaml:2:3: 'tls' needs cert, key and ca together; missing: key\n");
  EXPECT_EQ(Joined(ParseAgentConfig("tls: {cert: /a, key: /k, ca: /c, kee: /x}\n", "a.yaml", 2)),
            "a.yaml:1:34: unknown field 'kee' in tls; did you mean 'key'?\n");

  AgentConfig c = good.config;
  AgentOverrides o = WithNodeId("w1");
  o.tls_ca = "/flag/ca.pem";
  ASSERT_TRUE(ApplyAgentOverrides(c, o).ok());
  EXPECT_EQ(c.tls.ca, "/flag/ca.pem");
  EXPECT_EQ(c.tls.cert, "/etc/apollo/w1.pem");

  AgentConfig d = DefaultAgentConfig(2);
  AgentOverrides half = WithNodeId("w1");
  half.tls_cert = "/w1.pem";
  Status s = ApplyAgentOverrides(d, half);
  EXPECT_EQ(s.message(),
            "TLS needs --tls-cert, --tls-key and --tls-ca together (or all three in the config's "
            "tls block); missing: --tls-key, --tls-ca");
  EXPECT_FALSE(d.tls.any());
}

TEST(AgentConfigTest, HostileInputIsReportedNeverThrown) {
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  for (const std::string& text :
       {deep, std::string("node_id: !!binary aGVsbG8=\n"), std::string("? [a, b]\n: c\n"),
        std::string("node_id: &x edge\nlabels: *x\n"), std::string("\t\x01\xff: ["),
        std::string("node_id: n1\nreconnect: {initial_backoff_ms: 99999999999999999999}\n"),
        std::string(2 << 20, 'a')}) {
    ParsedAgentConfig p = ParseAgentConfig(text, "h.yaml", 2);
    EXPECT_FALSE(p.ok()) << text.substr(0, 60);
  }
}

}  // namespace
}  // namespace apollo::agent
