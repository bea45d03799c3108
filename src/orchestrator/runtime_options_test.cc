// Every key documented in config/orchestrator.yaml has an effect: set to
// another valid value, the options the binary derives from it change.
#include "orchestrator/runtime_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <set>

#include "core/config_values.h"

namespace apollo::orchestrator {
namespace {

// The shipped file, read as the daemons read it.
std::string ReadFile(const std::string& path) {
  auto text = ReadConfigFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

// A file setting one key (dotted path) to another valid value than the
// documented default. Keys of blocks that are commented out in the file
// (tls, alerts) are here too.
const std::map<std::string, std::string>& Alternatives() {
  static const auto* m = new std::map<std::string, std::string>{
      {"listen", "listen: 127.0.0.1:7099"},
      {"store", "store: sqlite:///tmp/other.db"},
      {"bus", "bus: nats://127.0.0.1:4222"},
      {"dispatch_interval", "dispatch_interval: 200ms"},
      {"state_sync_interval", "state_sync_interval: 60"},
      {"ack_timeout", "ack_timeout: 3"},
      {"heartbeat_interval", "heartbeat_interval: 5"},
      {"max_heartbeats_per_s", "max_heartbeats_per_s: 50"},
      {"suspect_after", "suspect_after: 45"},
      {"lost_after", "lost_after: 90"},
      {"start_timeout", "start_timeout: 0"},
      {"execution_extension.extend_by", "execution_extension: {extend_by: 30}"},
      {"execution_extension.max_extensions", "execution_extension: {max_extensions: 3}"},
      {"retry_presets.fast", "retry_presets: {fast: {max_retries: 2, initial_interval: 1}}"},
      {"retry_presets.slow", "retry_presets: {slow: {max_retries: 9, initial_interval: 30}}"},
      {"admission.max_new_sessions_per_s", "admission: {max_new_sessions_per_s: 7}"},
      {"circuit_breaker.failures", "circuit_breaker: {failures: 2}"},
      {"circuit_breaker.cool_down", "circuit_breaker: {cool_down: 5}"},
      {"retry_budget.rate_per_s", "retry_budget: {rate_per_s: 3}"},
      {"retry_budget.burst", "retry_budget: {burst: 4}"},
      {"queue.capacity", "queue: {capacity: 50}"},
      {"queue.alert_at", "queue: {alert_at: 0.5}"},
      {"queue.pause_at", "queue: {pause_at: 0.95}"},
      {"retention.dedup", "retention: {dedup: 48h}"},
      {"retention.history", "retention: {history: 2h}"},
      {"retention.alerts", "retention: {alerts: 1h}"},
      {"retention.dead_letters", "retention: {dead_letters: 1h}"},
      {"retention.audit", "retention: {audit: 1h}"},
      {"retention.interval", "retention: {interval: 5s}"},
      {"retention.batch", "retention: {batch: 50}"},
      {"store_options.synchronous", "store_options: {synchronous: normal}"},
      {"store_options.batch_max", "store_options: {batch_max: 10}"},
      {"store_options.writers", "store_options: {writers: 4}"},
      {"store_options.event_writers", "store_options: {event_writers: 1}"},
      {"bus_options.partitions", "bus_options: {partitions: 4}"},
      {"bus_options.max_deliver", "bus_options: {max_deliver: 2}"},
      {"callbacks.timeout", "callbacks: {timeout: 1}"},
      {"callbacks.max_attempts", "callbacks: {max_attempts: 2}"},
      {"callbacks.allowed_hosts", "callbacks: {allowed_hosts: [hooks.internal, 10.0.0.7]}"},
      {"tls.cert", "tls: {cert: /c.pem, key: /k.pem, ca: /ca.pem}"},
      {"tls.key", "tls: {cert: /c.pem, key: /k2.pem, ca: /ca.pem}"},
      {"tls.ca", "tls: {cert: /c.pem, key: /k.pem, ca: /ca2.pem}"},
      {"acl.enabled", "acl: {enabled: true}"},
      {"alerts.webhook_url", "alerts: {webhook_url: 'http://127.0.0.1:1/hook'}"},
      {"alerts.headers", "alerts: {headers: {Authorization: Bearer x}}"},
      {"alerts.timeout", "alerts: {timeout: 1}"},
      {"alerts.max_attempts", "alerts: {max_attempts: 3}"},
      {"limits.hello_timeout", "limits: {hello_timeout: 2s}"},
      {"limits.max_sessions", "limits: {max_sessions: 50}"},
      {"limits.max_watchers", "limits: {max_watchers: 3}"},
      {"limits.session_outbound_mib", "limits: {session_outbound_mib: 8}"},
      {"limits.busy_batches", "limits: {busy_batches: 0}"},
      {"limits.busy_hold", "limits: {busy_hold: 50ms}"},
      {"http.listen", "http: {listen: 127.0.0.1:7090}"},
      {"http.threads", "http: {threads: 2}"},
      {"http.ui_dir", "http: {ui_dir: /srv/apollo-ui}"},
      {"log_format", "log_format: json"},
  };
  return *m;
}

// The dotted key paths the file documents (two levels; retry_presets'
// entries count as keys).
std::set<std::string> DocumentedKeys(const YAML::Node& root) {
  std::set<std::string> keys;
  for (const auto& top : root) {
    const std::string k = top.first.as<std::string>();
    if (top.second.IsMap()) {
      for (const auto& sub : top.second) keys.insert(k + "." + sub.first.as<std::string>());
    } else {
      keys.insert(k);
    }
  }
  return keys;
}

std::string FingerprintOf(const std::string& yaml, std::string* problems) {
  ParsedOrchestratorConfig p = ParseOrchestratorConfig(yaml, "test.yaml");
  for (const auto& e : p.errors) *problems += e.ToString() + "\n";
  return Fingerprint(DeriveRuntimeOptions(p.config));
}

TEST(RuntimeOptionsTest, TheShippedFileIsTheDefaults) {
  const std::string text = ReadFile(APOLLO_SOURCE_DIR "/config/orchestrator.yaml");
  ASSERT_FALSE(text.empty());
  std::string problems;
  EXPECT_EQ(FingerprintOf(text, &problems), Fingerprint(DeriveRuntimeOptions({})));
  EXPECT_EQ(problems, "");
}

TEST(RuntimeOptionsTest, EveryDocumentedKeyHasAnEffect) {
  const std::string text = ReadFile(APOLLO_SOURCE_DIR "/config/orchestrator.yaml");
  const std::set<std::string> documented = DocumentedKeys(YAML::Load(text));
  ASSERT_GT(documented.size(), 20u);
  const std::string defaults = Fingerprint(DeriveRuntimeOptions({}));
  for (const std::string& key : documented) {
    SCOPED_TRACE(key);
    auto alt = Alternatives().find(key);
    ASSERT_NE(alt, Alternatives().end())
        << "config/orchestrator.yaml documents '" << key
        << "' but this test has no other value for it: add one, and make the key do something";
  }
  for (const auto& [key, yaml] : Alternatives()) {
    SCOPED_TRACE(key + " <- " + yaml);
    std::string problems;
    std::string changed = FingerprintOf(yaml, &problems);
    EXPECT_EQ(problems, "") << "the alternative value is not valid";
    EXPECT_NE(changed, defaults) << "setting '" << key << "' changes nothing the binary uses";
  }
}

TEST(RuntimeOptionsTest, PresetsMergeOverTheBuiltins) {
  std::string problems;
  ParsedOrchestratorConfig p =
      ParseOrchestratorConfig("retry_presets: {fast: {max_retries: 2, initial_interval: 1}}", "t");
  ASSERT_TRUE(p.ok());
  RuntimeOptions r = DeriveRuntimeOptions(p.config);
  EXPECT_EQ(r.orchestrator.retry_presets.at("fast").max_retries, 2);
  EXPECT_EQ(r.orchestrator.retry_presets.at("slow").max_retries, RetryPolicy::Slow().max_retries);
  EXPECT_TRUE(r.orchestrator.retry_presets.count("none"));
}

TEST(RuntimeOptionsTest, AlertHeadersBecomeHeaderLines) {
  ParsedOrchestratorConfig p = ParseOrchestratorConfig(
      "alerts: {webhook_url: 'https://pager.example/hook', headers: {Authorization: Bearer t}}",
      "t");
  ASSERT_TRUE(p.ok()) << p.errors.front().ToString();
  RuntimeOptions r = DeriveRuntimeOptions(p.config);
  EXPECT_EQ(r.alerts.webhook_url, "https://pager.example/hook");
  EXPECT_THAT(r.alerts.headers, testing::ElementsAre("Authorization: Bearer t"));
}

TEST(RuntimeOptionsTest, BadAlertBlocksSayWhere) {
  auto p = ParseOrchestratorConfig("alerts:\n  webhook_url: ftp://x\n", "o.yaml");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 2);
  EXPECT_THAT(p.errors[0].message, testing::HasSubstr("http:// or https://"));
  p = ParseOrchestratorConfig("alerts:\n  headers: {'Bad Name': x}\n", "o.yaml");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_THAT(p.errors[0].message, testing::HasSubstr("not a header name"));
}

}  // namespace
}  // namespace apollo::orchestrator
