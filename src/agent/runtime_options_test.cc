// Every key documented in config/edge-agent.yaml has an effect: set to
// another valid value, the options bin/edge-agent derives from it change.
#include "agent/runtime_options.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <set>

#include "core/config_values.h"

namespace apollo::agent {
namespace {

constexpr int kCores = 4;

// The shipped file, read as the daemons read it.
std::string ReadFile(const std::string& path) {
  auto text = ReadConfigFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

// One key (dotted path) at another valid value than the file's. Keys the
// file shows commented out (tls, wal_path, max_concurrency) are here too.
const std::map<std::string, std::string>& Alternatives() {
  static const auto* m = new std::map<std::string, std::string>{
      {"node_id", "node_id: edge-2"},
      {"labels", "labels: {role: worker}"},
      {"groups", "groups: [canary]"},
      {"orchestrator", "orchestrator: 10.0.0.1:7011"},
      {"tls.cert", "tls: {cert: /c.pem, key: /k.pem, ca: /ca.pem}"},
      {"tls.key", "tls: {cert: /c.pem, key: /k2.pem, ca: /ca.pem}"},
      {"tls.ca", "tls: {cert: /c.pem, key: /k.pem, ca: /ca2.pem}"},
      {"state_dir", "state_dir: /var/lib/apollo"},
      {"wal_path", "wal_path: /var/lib/apollo/wal"},
      {"heartbeat_interval", "heartbeat_interval: 5"},
      {"max_concurrency", "max_concurrency: 3"},
      {"autonomy_window", "autonomy_window: 45"},
      {"state_sync_interval", "state_sync_interval: 60"},
      {"handlers", "handlers: {upgrade_service: /usr/lib/apollo/upgrade}"},
      {"enabled_intents", "enabled_intents: [noop]"},
      {"exec.allowed_commands", "exec: {allowed_commands: [/usr/bin/systemctl]}"},
      {"ensure_file.allowed_dirs", "ensure_file: {allowed_dirs: [/etc/app]}"},
      {"ensure_file.allow_special_modes", "ensure_file: {allow_special_modes: true}"},
      {"kill_grace", "kill_grace: 2"},
      {"final_event_hold_ms", "final_event_hold_ms: 20"},
      {"metrics_paths", "metrics_paths: [/, /data]"},
      {"metrics_listen", "metrics_listen: 127.0.0.1:9101"},
      {"log_format", "log_format: json"},
      {"reconnect.initial_backoff_ms", "reconnect: {initial_backoff_ms: 100}"},
      {"reconnect.max_backoff_ms", "reconnect: {max_backoff_ms: 5000}"},
      {"wal.segment_size_mb", "wal: {segment_size_mb: 16}"},
      {"wal.retention_hours", "wal: {retention_hours: 24}"},
      {"wal.archive_dir", "wal: {archive_dir: /var/lib/apollo/archive}"},
  };
  return *m;
}

std::set<std::string> DocumentedKeys(const YAML::Node& root) {
  std::set<std::string> keys;
  for (const auto& top : root) {
    const std::string k = top.first.as<std::string>();
    if (top.second.IsMap() && top.second.size() > 0 && k != "labels" && k != "handlers") {
      for (const auto& sub : top.second) keys.insert(k + "." + sub.first.as<std::string>());
    } else {
      keys.insert(k);
    }
  }
  return keys;
}

// Parsed and finished as the binary does (wal_path from state_dir).
std::string FingerprintOf(const std::string& yaml, std::string* problems) {
  ParsedAgentConfig p = ParseAgentConfig(yaml, "test.yaml", kCores);
  for (const auto& e : p.errors) *problems += e.ToString() + "\n";
  if (Status s = FinishAgentConfig(p.config); !s.ok()) *problems += s.message() + "\n";
  return Fingerprint(DeriveAgentRuntimeOptions(p.config));
}

TEST(AgentRuntimeOptionsTest, TheShippedFileIsTheDefaultsForItsNode) {
  const std::string text = ReadFile(APOLLO_SOURCE_DIR "/config/edge-agent.yaml");
  ASSERT_FALSE(text.empty());
  std::string problems;
  // The shipped file names its node and labels it a worker (so the
  // original write-up's task file, which selects role=worker, matches an
  // installed agent); every other value is the default.
  EXPECT_EQ(FingerprintOf(text, &problems),
            FingerprintOf("node_id: edge-1\nlabels: {role: worker}", &problems));
  EXPECT_EQ(problems, "");
}

TEST(AgentRuntimeOptionsTest, EveryDocumentedKeyHasAnEffect) {
  const std::string text = ReadFile(APOLLO_SOURCE_DIR "/config/edge-agent.yaml");
  const std::set<std::string> documented = DocumentedKeys(YAML::Load(text));
  ASSERT_GT(documented.size(), 15u);
  for (const std::string& key : documented) {
    EXPECT_TRUE(Alternatives().count(key))
        << "config/edge-agent.yaml documents '" << key
        << "' but this test has no other value for it: add one, and make the key do something";
  }
  std::string problems;
  const std::string base = FingerprintOf("node_id: edge-1", &problems);
  ASSERT_EQ(problems, "");
  for (const auto& [key, yaml] : Alternatives()) {
    SCOPED_TRACE(key + " <- " + yaml);
    std::string text2 = key == "node_id" ? yaml : "node_id: edge-1\n" + yaml;
    std::string changed = FingerprintOf(text2, &problems);
    EXPECT_EQ(problems, "") << "the alternative value is not valid";
    problems.clear();
    EXPECT_NE(changed, base) << "setting '" << key << "' changes nothing the agent uses";
  }
}

}  // namespace
}  // namespace apollo::agent
