// orchestrator.yaml -> OrchestratorConfig, every problem reported with its
// position.
#include "orchestrator/orchestrator_config.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

#include "core/config_reader.h"

namespace apollo::orchestrator {
namespace {

using namespace std::chrono_literals;
using internal::Field;
using internal::Quote;
using internal::YamlReader;

const std::vector<std::string_view> kFields = {"listen",
                                               "store",
                                               "bus",
                                               "dispatch_interval",
                                               "state_sync_interval",
                                               "ack_timeout",
                                               "heartbeat_interval",
                                               "max_heartbeats_per_s",
                                               "suspect_after",
                                               "lost_after",
                                               "start_timeout",
                                               "execution_extension",
                                               "retry_presets",
                                               "admission",
                                               "circuit_breaker",
                                               "retry_budget",
                                               "queue",
                                               "retention",
                                               "store_options",
                                               "bus_options",
                                               "callbacks",
                                               "tls",
                                               "acl",
                                               "alerts",
                                               "limits",
                                               "http",
                                               "replication",
                                               "log_format"};
const std::vector<std::string_view> kPresetFields = {"max_retries", "initial_interval",
                                                     "max_interval", "backoff", "jitter"};

constexpr Duration kDay = 24h;

// "cert, ca" (with `prefix` before each) for the TLS settings not set.
std::string JoinMissing(const tls::TlsPaths& paths, std::string_view prefix) {
  std::string out;
  for (std::string_view m : paths.Missing()) {
    out += (out.empty() ? "" : ", ") + std::string(prefix) + std::string(m);
  }
  return out;
}

// Reads one field of a section; false if it was wrong (already reported).
using FieldReader = std::function<bool(const YAML::Node& value, const std::string& name)>;

class OrchestratorParser {
 public:
  OrchestratorParser(YamlReader& r, OrchestratorConfig* c) : r_(r), c_(c) {}

  void Parse(const YAML::Node& root) {
    if (root.IsNull()) return;
    for (const Field& f : r_.Fields(root, "orchestrator config", kFields)) {
      if (Value(f)) set_[f.key] = f.value;
    }
    CrossChecks();
  }

 private:
  bool Value(const Field& f);
  // A mapping section whose fields are read by `readers` (by key).
  bool Section(const Field& f, const std::map<std::string, FieldReader>& readers);
  bool Presets(const YAML::Node& n);
  bool Preset(const std::string& name, const YAML::Node& n, RetryPolicy* out);
  bool Dur(const YAML::Node& n, const std::string& name, Duration min, Duration max,
           Duration* out) {
    return internal::ReadDuration(r_, n, name, min, max, out);
  }
  template <typename T>
  FieldReader Int(int64_t min, int64_t max, T* out) {
    return [=, this](const YAML::Node& n, const std::string& name) {
      return internal::ReadInt(r_, n, name, min, max, out);
    };
  }
  FieldReader DurationIn(Duration min, Duration max, Duration* out) {
    return [=, this](const YAML::Node& n, const std::string& name) {
      return Dur(n, name, min, max, out);
    };
  }
  FieldReader Fraction(double* out) {
    return [=, this](const YAML::Node& n, const std::string& name) {
      return internal::ReadNumber(r_, n, name, 0.01, 1.0, out);
    };
  }
  // The `http` block: listen (host:port, or off / ""), threads, ui_dir.
  bool Http(const Field& f);
  // The `replication` block: replica_id, advertise, lease_ttl.
  bool Replication(const Field& f);
  // The `tls` block: cert, key, ca paths, all three or none.
  bool Tls(const Field& f);
  // The `alerts` block: webhook_url (http/https), headers, timeout, attempts.
  bool Alerts(const Field& f);
  void CrossChecks();
  // Reports `message` at the later of two fields the file set, if any.
  void ReportAt(const std::string& a, const std::string& b, const std::string& message);

  YamlReader& r_;
  OrchestratorConfig* c_;
  std::map<std::string, YAML::Node> set_;  // fields read without error
};

bool OrchestratorParser::Value(const Field& f) {
  const YAML::Node& v = f.value;
  const std::string& k = f.key;
  OrchestratorConfig& c = *c_;
  if (k == "listen") {
    return internal::ReadHostPort(r_, v, k, &c.listen, /*allow_any_port=*/true);
  }
  if (k == "store" || k == "bus") {
    if (v.IsMap()) {  // settings written under the URL's key
      r_.Error(v,
               "'" + k + "' is the " + k + "'s URL, a string (" +
                   (k == "store" ? "sqlite://PATH or postgresql://..." : "embedded or nats://...") +
                   "); its settings go under '" + k + "_options'");
      return false;
    }
    auto s = r_.String(v, k);
    if (!s) return false;
    Status st = k == "store" ? CheckStoreUrl(*s) : CheckBusUrl(*s);
    if (!st.ok()) {
      r_.Error(v, "'" + k + "': " + st.message());
      return false;
    }
    (k == "store" ? c.store : c.bus) = *s;
    return true;
  }
  if (k == "log_format") {
    auto s = r_.String(v, k);
    if (!s) return false;
    if (*s != "text" && *s != "json") {
      r_.Error(v, "'log_format' must be text or json, got " + Quote(*s));
      return false;
    }
    c.log_format = *s;
    return true;
  }
  if (k == "dispatch_interval") return Dur(v, k, 10ms, 60s, &c.dispatch_interval);
  if (k == "state_sync_interval") return Dur(v, k, 10s, kDay, &c.state_sync_interval);
  if (k == "ack_timeout") return Dur(v, k, 1s, 1h, &c.ack_timeout);
  if (k == "heartbeat_interval") return Dur(v, k, 1s, 300s, &c.heartbeat_interval);
  if (k == "max_heartbeats_per_s") {
    return internal::ReadInt(r_, v, k, 0, 1'000'000, &c.max_heartbeats_per_s);
  }
  if (k == "suspect_after") return Dur(v, k, 1s, 1h, &c.suspect_after);
  if (k == "lost_after") return Dur(v, k, 1s, kDay, &c.lost_after);
  if (k == "start_timeout") return Dur(v, k, 0s, 30 * kDay, &c.start_timeout);
  if (k == "retry_presets") return Presets(v);
  if (k == "execution_extension") {
    return Section(f, {{"extend_by", DurationIn(0s, kDay, &c.execution_extension.extend_by)},
                       {"max_extensions", Int(0, 100, &c.execution_extension.max_extensions)}});
  }
  if (k == "admission") {
    return Section(f, {{"max_new_sessions_per_s",
                        Int(1, 100'000, &c.admission.max_new_sessions_per_s)}});
  }
  if (k == "circuit_breaker") {
    return Section(f, {{"failures", Int(1, 1000, &c.circuit_breaker.failures)},
                       {"cool_down", DurationIn(1s, kDay, &c.circuit_breaker.cool_down)}});
  }
  if (k == "retry_budget") {
    FieldReader rate = [this](const YAML::Node& n, const std::string& name) {
      return internal::ReadNumber(r_, n, name, 0.01, 1e6, &c_->retry_budget.rate_per_s);
    };
    return Section(f, {{"rate_per_s", rate}, {"burst", Int(1, 1'000'000, &c.retry_budget.burst)}});
  }
  if (k == "queue") {
    return Section(f, {{"capacity", Int(1, 10'000'000, &c.queue.capacity)},
                       {"alert_at", Fraction(&c.queue.alert_at)},
                       {"pause_at", Fraction(&c.queue.pause_at)}});
  }
  if (k == "retention") {
    return Section(f, {{"dedup", DurationIn(1min, 365 * kDay, &c.retention.dedup)},
                       {"history", DurationIn(1min, 3650 * kDay, &c.retention.history)},
                       {"alerts", DurationIn(1min, 3650 * kDay, &c.retention.alerts)},
                       {"dead_letters", DurationIn(1min, 3650 * kDay, &c.retention.dead_letters)},
                       {"audit", DurationIn(1min, 3650 * kDay, &c.retention.audit)},
                       {"interval", DurationIn(1s, kDay, &c.retention.interval)},
                       {"batch", Int(10, 100'000, &c.retention.batch)}});
  }
  if (k == "store_options") {
    FieldReader sync = [this](const YAML::Node& n, const std::string& name) {
      auto s = r_.String(n, name);
      if (!s) return false;
      std::string lower = *s;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (lower != "full" && lower != "normal") {
        r_.Error(n, "'" + name + "' must be full or normal, got " + Quote(*s));
        return false;
      }
      c_->store_options.synchronous = lower == "full" ? SqliteSync::kFull : SqliteSync::kNormal;
      return true;
    };
    return Section(f, {{"synchronous", sync},
                       {"batch_max", Int(1, 100'000, &c.store_options.batch_max)},
                       {"writers", Int(1, 16, &c.store_options.writers)},
                       {"event_writers", Int(1, 15, &c.store_options.event_writers)}});
  }
  if (k == "bus_options") {
    return Section(f, {{"partitions", Int(1, 1024, &c.bus_options.partitions)},
                       {"max_deliver", Int(1, 100, &c.bus_options.max_deliver)}});
  }
  if (k == "limits") {
    return Section(f, {{"hello_timeout", DurationIn(100ms, 5min, &c.limits.hello_timeout)},
                       {"max_sessions", Int(1, 1'000'000, &c.limits.max_sessions)},
                       {"max_watchers", Int(1, 100'000, &c.limits.max_watchers)},
                       {"session_outbound_mib", Int(2, 4096, &c.limits.session_outbound_mib)},
                       {"busy_batches", Int(0, 1'000'000, &c.limits.busy_batches)},
                       {"busy_hold", DurationIn(1ms, 5s, &c.limits.busy_hold)}});
  }
  if (k == "http") return Http(f);
  if (k == "replication") return Replication(f);
  if (k == "tls") return Tls(f);
  if (k == "acl") {
    FieldReader enabled = [this](const YAML::Node& n, const std::string& name) {
      auto b = r_.Bool(n, name);
      if (b) c_->acl_enabled = *b;
      return b.has_value();
    };
    return Section(f, {{"enabled", enabled}});
  }
  if (k == "alerts") return Alerts(f);
  FieldReader hosts = [this](const YAML::Node& n, const std::string& name) {
    auto list = r_.StringList(n, name);
    if (!list) return false;
    c_->callbacks.allowed_hosts.clear();
    for (const auto& [host, node] : *list) {
      if (host.empty() || host.find_first_of(" /\\@") != std::string::npos) {
        r_.Error(node, "'" + name + "': " + Quote(host) + " is not a host name or address");
        return false;
      }
      c_->callbacks.allowed_hosts.push_back(host);
    }
    return true;
  };
  return Section(f, {{"timeout", DurationIn(100ms, 5min, &c.callbacks.timeout)},  // callbacks
                     {"max_attempts", Int(1, 100, &c.callbacks.max_attempts)},
                     {"allowed_hosts", hosts}});
}

bool OrchestratorParser::Section(const Field& f,
                                 const std::map<std::string, FieldReader>& readers) {
  std::vector<std::string_view> allowed;
  std::string hint;
  for (const auto& [key, reader] : readers) {
    allowed.push_back(key);
    hint += (hint.empty() ? "" : ", ") + key;
  }
  if (!internal::RequireMap(r_, f.value, f.key, hint)) return false;
  bool ok = true;
  for (const Field& sub : r_.Fields(f.value, f.key, allowed)) {
    const std::string name = f.key + "." + sub.key;
    bool good = readers.at(sub.key)(sub.value, name);
    if (good) set_[name] = sub.value;
    ok = ok && good;
  }
  return ok;
}

bool OrchestratorParser::Alerts(const Field& f) {
  AlertsConfig& a = c_->alerts;
  FieldReader url = [this, &a](const YAML::Node& n, const std::string& name) {
    auto s = r_.String(n, name);
    if (!s) return false;
    if (s->rfind("http://", 0) != 0 && s->rfind("https://", 0) != 0) {
      r_.Error(n, "'" + name + "' must be an http:// or https:// URL, got " + Quote(*s));
      return false;
    }
    a.webhook_url = *s;
    return true;
  };
  FieldReader headers = [this, &a](const YAML::Node& n, const std::string& name) {
    if (!internal::RequireMap(r_, n, name, "Header-Name: value")) return false;
    bool ok = true;
    for (const auto& kv : n) {
      auto key = r_.String(kv.first, name);
      auto value = r_.String(kv.second, name + "." + (key ? *key : std::string("?")));
      bool token = key && !key->empty() && key->find_first_of(": \t\r\n") == std::string::npos;
      if (key && !token)
        r_.Error(kv.first, "'" + name + "': " + Quote(*key) + " is not a header name");
      if (value && value->find_first_of("\r\n") != std::string::npos) {
        r_.Error(kv.second, "'" + name + "." + *key + "': a header value cannot hold a line break");
        value.reset();
      }
      if (!key || !token || !value) {
        ok = false;
        continue;
      }
      a.headers[*key] = *value;
    }
    return ok;
  };
  return Section(f, {{"webhook_url", url},
                     {"headers", headers},
                     {"timeout", DurationIn(100ms, 5min, &a.timeout)},
                     {"max_attempts", Int(1, 1000, &a.max_attempts)}});
}

bool OrchestratorParser::Http(const Field& f) {
  FieldReader listen = [this](const YAML::Node& n, const std::string& name) {
    if (n.IsScalar() && (n.Scalar().empty() || n.Scalar() == "off")) {
      c_->http.enabled = false;
      return true;
    }
    c_->http.enabled = true;
    return internal::ReadHostPort(r_, n, name, &c_->http.listen, /*allow_any_port=*/true);
  };
  FieldReader ui_dir = [this](const YAML::Node& n, const std::string& name) {
    if (n.IsScalar() && n.Scalar().empty()) {  // "": the default place
      c_->http.ui_dir.clear();
      return true;
    }
    return internal::ReadPath(r_, n, name, false, &c_->http.ui_dir);
  };
  return Section(
      f, {{"listen", listen}, {"threads", Int(1, 64, &c_->http.threads)}, {"ui_dir", ui_dir}});
}

bool OrchestratorParser::Replication(const Field& f) {
  FieldReader id = [this](const YAML::Node& n, const std::string& name) {
    auto v = r_.String(n, name);
    if (!v) return false;
    if (Status s = CheckReplicaId(*v); !s.ok()) {
      r_.Error(n, "'" + name + "': " + s.message());
      return false;
    }
    c_->replication.replica_id = *v;
    return true;
  };
  FieldReader advertise = [this](const YAML::Node& n, const std::string& name) {
    HostPort hp;
    if (!internal::ReadHostPort(r_, n, name, &hp, /*allow_any_port=*/false)) return false;
    c_->replication.advertise = hp;
    return true;
  };
  return Section(f, {{"replica_id", id},
                     {"advertise", advertise},
                     {"lease_ttl", DurationIn(1s, 60s, &c_->replication.lease_ttl)}});
}

bool OrchestratorParser::Tls(const Field& f) {
  tls::TlsPaths paths;
  auto path = [this](std::string* out) -> FieldReader {
    return [this, out](const YAML::Node& n, const std::string& name) {
      return internal::ReadPath(r_, n, name, false, out);
    };
  };
  if (!Section(f, {{"cert", path(&paths.cert)}, {"key", path(&paths.key)},
                   {"ca", path(&paths.ca)}})) {
    return false;
  }
  if (!paths.complete()) {
    r_.Error(f.value, "'tls' needs cert, key and ca together; missing: " + JoinMissing(paths, ""));
    return false;
  }
  c_->tls = paths;
  return true;
}

bool OrchestratorParser::Presets(const YAML::Node& n) {
  auto entries = internal::MapEntries(r_, n, "retry_presets");
  if (!entries) return false;
  std::map<std::string, RetryPolicy> presets = c_->retry_presets;
  bool ok = true;
  for (const Field& e : *entries) {
    RetryPolicy policy;
    if (auto p = internal::KeyProblem("retry_presets", e.key, false); !p.empty()) {
      r_.Error(e.key_node, p);
      ok = false;
    } else if (Preset(e.key, e.value, &policy)) {
      presets[e.key] = policy;
    } else {
      ok = false;
    }
  }
  if (ok) c_->retry_presets = std::move(presets);
  return ok;
}

bool OrchestratorParser::Preset(const std::string& name, const YAML::Node& n, RetryPolicy* out) {
  const std::string what = "retry_presets." + name;
  if (!internal::RequireMap(r_, n, what,
                            "max_retries, initial_interval, max_interval, backoff, jitter")) {
    return false;
  }
  bool ok = true;
  std::optional<YAML::Node> initial_node;  // where an interval mismatch is reported
  for (const Field& f : r_.Fields(n, what, kPresetFields)) {
    const std::string field = what + "." + f.key;
    Duration d{0};
    if (f.key == "max_retries") {
      ok = internal::ReadInt(r_, f.value, field, 0, 100, &out->max_retries) && ok;
    } else if (f.key == "initial_interval" || f.key == "max_interval") {
      bool good = Dur(f.value, field, 0s, kDay, &d);
      if (good && d % std::chrono::seconds(1) != Duration(0)) {
        r_.Error(f.value, "'" + field + "' must be whole seconds, got " + FormatDuration(d));
        good = false;
      }
      auto secs = std::chrono::duration_cast<std::chrono::seconds>(d);
      if (good) (f.key == "initial_interval" ? out->initial_interval : out->max_interval) = secs;
      if (good && f.key == "initial_interval") initial_node = f.value;
      ok = ok && good;
    } else if (f.key == "backoff") {
      auto s = r_.String(f.value, field);
      auto b = s ? ParseBackoff(*s) : std::nullopt;
      if (s && !b) {
        r_.Error(f.value, "'" + field + "' must be exponential or fixed, got " + Quote(*s));
      }
      if (b) out->backoff = *b;
      ok = ok && b.has_value();
    } else {
      auto b = r_.Bool(f.value, field);
      if (b) out->jitter = *b;
      ok = ok && b.has_value();
    }
  }
  if (ok && out->initial_interval > out->max_interval) {
    r_.Error(initial_node ? *initial_node : n,
             "'" + what + ".initial_interval' (" + std::to_string(out->initial_interval.count()) +
                 "s) is greater than '" + what + ".max_interval' (" +
                 std::to_string(out->max_interval.count()) + "s)");
    ok = false;
  }
  return ok;
}

void OrchestratorParser::ReportAt(const std::string& a, const std::string& b,
                                  const std::string& message) {
  if (set_.count(b)) {
    r_.Error(set_[b], message);
  } else if (set_.count(a)) {
    r_.Error(set_[a], message);
  }
}

void OrchestratorParser::CrossChecks() {
  const OrchestratorConfig& c = *c_;
  auto d = [](Duration x) { return " (" + FormatDuration(x) + ")"; };
  if (c.suspect_after <= c.heartbeat_interval) {
    ReportAt("heartbeat_interval", "suspect_after",
             "'suspect_after'" + d(c.suspect_after) + " must be longer than 'heartbeat_interval'" +
                 d(c.heartbeat_interval) + ", or every node would look suspect between beats");
  }
  if (c.lost_after <= c.suspect_after) {
    ReportAt("suspect_after", "lost_after",
             "'lost_after'" + d(c.lost_after) + " must be longer than 'suspect_after'" +
                 d(c.suspect_after));
  }
  if (c.queue.alert_at >= c.queue.pause_at) {
    ReportAt("queue.alert_at", "queue.pause_at",
             "'queue.alert_at' must be below 'queue.pause_at' (an alert comes before the pause)");
  }
  // Only when it was written: a config that sets 'writers: 2' alone (one
  // event writer then, as before the key existed) is fine.
  const StoreOptionsConfig& so = c.store_options;
  if (set_.count("store_options.event_writers") && so.event_writers >= so.writers &&
      !(so.writers == 1 && so.event_writers == 1)) {
    ReportAt("store_options.writers", "store_options.event_writers",
             "'store_options.event_writers' (" + std::to_string(so.event_writers) +
                 ") must be below 'store_options.writers' (" + std::to_string(so.writers) +
                 "): at least one write connection is left for creates, dispatch and timeouts");
  }
}

Status Bad(std::string_view url, std::string_view why) {
  return Status::InvalidArgument(Quote(url) + " " + std::string(why));
}

Status CheckPathValue(const std::string& v) {
  if (v.empty()) return Status::InvalidArgument("the path is empty");
  if (v.find('\0') != std::string::npos) {
    return Status::InvalidArgument("the path contains a NUL character");
  }
  return Status::Ok();
}

}  // namespace

std::string_view SqliteSyncName(SqliteSync s) { return s == SqliteSync::kFull ? "FULL" : "NORMAL"; }

Status CheckStoreUrl(std::string_view url) {
  constexpr std::string_view kSqlite = "sqlite://";
  if (url.find('\0') != std::string_view::npos) return Bad(url, "contains a NUL character");
  if (url.starts_with(kSqlite)) {
    if (url.size() == kSqlite.size()) {
      return Bad(url, "has no database path (e.g. sqlite://./var/apollo.db)");
    }
    return Status::Ok();
  }
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) return Status::Ok();
  if (url.find("://") == std::string_view::npos) {
    return Bad(url, "is not a store URL; for a SQLite file write sqlite://<path> "
                    "(e.g. sqlite://./var/apollo.db)");
  }
  return Bad(url, "is not supported; use sqlite://<path> or postgresql://...");
}

Status CheckBusUrl(std::string_view url) {
  constexpr std::string_view kNats = "nats://";
  if (url == kEmbeddedBus) return Status::Ok();
  if (!url.starts_with(kNats)) return Bad(url, "is not a bus; use embedded or nats://host:port");
  auto hp = ParseHostPort(url.substr(kNats.size()));
  if (!hp.ok()) return Status::InvalidArgument("nats: " + hp.status().message());
  return Status::Ok();
}

ParsedOrchestratorConfig ParseOrchestratorConfig(std::string_view content,
                                                 std::string_view file_name) {
  ParsedOrchestratorConfig out;
  internal::ParseConfigDocument(content, file_name, &out.errors,
                                [&](YamlReader& r, const YAML::Node& root) {
                                  OrchestratorParser(r, &out.config).Parse(root);
                                });
  return out;
}

Status CheckReplicaId(std::string_view id) {
  if (id.empty() || id.size() > 128) {
    return Status::InvalidArgument("a replica id is 1 to 128 characters");
  }
  for (char ch : id) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.' &&
        ch != ':') {
      return Status::InvalidArgument("replica id '" + std::string(id) +
                                     "' may hold only letters, digits and - _ . :");
    }
  }
  return Status::Ok();
}

Status ApplyOrchestratorOverrides(OrchestratorConfig& config,
                                  const OrchestratorOverrides& o) {
  OrchestratorConfig c = config;
  std::string problems;
  auto problem = [&](std::string_view flag, const Status& s) {
    if (!s.ok()) problems += (problems.empty() ? "" : "\n") + std::string(flag) + ": " + s.message();
    return s.ok();
  };
  if (o.listen) {
    auto hp = ParseHostPort(*o.listen, /*allow_any_port=*/true);
    if (problem("--listen", hp.status())) c.listen = *hp;
  }
  if (o.store && problem("--store", CheckStoreUrl(*o.store))) c.store = *o.store;
  if (o.bus && problem("--bus", CheckBusUrl(*o.bus))) c.bus = *o.bus;
  if (o.http_listen) {
    c.http.enabled = !o.http_listen->empty() && *o.http_listen != "off";
    if (c.http.enabled) {
      auto hp = ParseHostPort(*o.http_listen, /*allow_any_port=*/true);
      if (problem("--http-listen", hp.status())) c.http.listen = *hp;
    }
  }
  if (o.replica_id && problem("--replica-id", CheckReplicaId(*o.replica_id))) {
    c.replication.replica_id = *o.replica_id;
  }
  if (o.advertise) {
    auto hp = ParseHostPort(*o.advertise);
    if (problem("--advertise", hp.status())) c.replication.advertise = *hp;
  }
  if (o.log_format) {
    if (*o.log_format == "text" || *o.log_format == "json") {
      c.log_format = *o.log_format;
    } else {
      problem("--log-format",
              Status::InvalidArgument("must be text or json, got '" + *o.log_format + "'"));
    }
  }
  if (o.http_ui_dir && problem("--http-ui-dir", CheckPathValue(*o.http_ui_dir))) {
    c.http.ui_dir = *o.http_ui_dir;
  }
  auto tls_flag = [&](std::string_view flag, const std::optional<std::string>& v,
                      std::string* out) {
    if (v && problem(flag, CheckPathValue(*v))) *out = *v;
  };
  tls_flag("--tls-cert", o.tls_cert, &c.tls.cert);
  tls_flag("--tls-key", o.tls_key, &c.tls.key);
  tls_flag("--tls-ca", o.tls_ca, &c.tls.ca);
  if (problems.empty() && c.tls.any() && !c.tls.complete()) {
    problems = "TLS needs --tls-cert, --tls-key and --tls-ca together (or all three in the "
               "config's tls block); missing: " + JoinMissing(c.tls, "--tls-");
  }
  c.insecure = c.insecure || o.insecure;
  if (o.acl) c.acl_enabled = true;
  if (!problems.empty()) return Status::InvalidArgument(problems);
  config = std::move(c);
  return Status::Ok();
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8, written as a dotted quad.
  if (!host.starts_with("127.")) return false;
  int dots = 0;
  for (char ch : host) {
    if (ch == '.') {
      ++dots;
    } else if (ch < '0' || ch > '9') {
      return false;
    }
  }
  return dots == 3;
}

namespace {

// The verdict on one served address (`flag` names it in messages).
void CheckAddress(const OrchestratorConfig& c, const HostPort& address, std::string_view flag,
                  ExposureVerdict& v) {
  if (!v.status.ok()) return;
  if (IsLoopbackHost(address.host) || (c.tls.complete() && c.AclEnabled())) return;
  const std::string where =
      address.ToString() + (flag == "--listen" ? "" : " (" + std::string(flag) + ")");
  const std::string missing = !c.tls.complete() && !c.AclEnabled() ? "without TLS and tokens"
                              : !c.tls.complete()                  ? "without TLS"
                                                                   : "without operator tokens";
  if (c.insecure) {
    v.warnings.push_back("WARNING: --insecure: serving " + where + " " + missing +
                         ". Anyone who can reach this port can act as " +
                         (c.tls.complete() ? "an operator (submit tasks, cancel them)"
                                           : "any node and as an operator (submit tasks, "
                                             "cancel them)") +
                         ". Use --tls-cert, --tls-key and --tls-ca with operator tokens.");
    return;
  }
  std::string fix = c.tls.complete()
                        ? "Remove 'acl: {enabled: false}' from the config (tokens are on by "
                          "default with TLS)"
                        : "Give --tls-cert, --tls-key and --tls-ca (or the config's tls block; "
                          "make them with apollo-cli tls ca create / tls cert create; operator "
                          "tokens then come on by default)";
  v.status = Status::FailedPrecondition(
      "refusing to listen on " + where + " (not a loopback address) " + missing +
      ": anyone who can reach it could act as " +
      (c.tls.complete() ? std::string("an operator") : std::string("any node and as an operator")) +
      ". " + fix + ", or --insecure to accept the risk");
}

}  // namespace

ExposureVerdict CheckExposure(const OrchestratorConfig& c) {
  ExposureVerdict v;
  if (c.AclEnabled() && !c.tls.complete()) {
    v.warnings.push_back(
        "WARNING: operator tokens are required but TLS is off: tokens travel in plaintext and "
        "agents are not authenticated (any local process can act as any node)");
  }
  CheckAddress(c, c.listen, "--listen", v);
  // The HTTP server serves the same operator API (and /metrics): the same rule.
  if (c.http.enabled) CheckAddress(c, c.http.listen, "--http-listen", v);
  return v;
}

Result<OrchestratorConfig> LoadOrchestratorConfig(const std::string& path,
                                                  const OrchestratorOverrides& overrides) {
  OrchestratorConfig config;
  if (!path.empty()) {
    auto content = ReadConfigFile(path);
    if (!content.ok()) return content.status();
    ParsedOrchestratorConfig parsed = ParseOrchestratorConfig(*content, path);
    if (!parsed.ok()) return Status::InvalidArgument(JoinDiagnostics(parsed.errors));
    config = std::move(parsed.config);
  }
  APOLLO_RETURN_IF_ERROR(ApplyOrchestratorOverrides(config, overrides));
  return config;
}

}  // namespace apollo::orchestrator
