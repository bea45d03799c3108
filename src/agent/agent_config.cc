// edge-agent.yaml -> AgentConfig, every problem reported with its position.
#include "agent/agent_config.h"

#include <algorithm>
#include <map>

#include "core/config_reader.h"

namespace apollo::agent {
namespace {

using namespace std::chrono_literals;
using internal::Field;
using internal::Quote;
using internal::YamlReader;

constexpr int kMaxConcurrency = 1024;

const std::vector<std::string_view> kFields = {"node_id",
                                               "labels",
                                               "groups",
                                               "orchestrator",
                                               "wal_path",
                                               "state_dir",
                                               "heartbeat_interval",
                                               "max_concurrency",
                                               "autonomy_window",
                                               "state_sync_interval",
                                               "handlers",
                                               "enabled_intents",
                                               "exec",
                                               "ensure_file",
                                               "kill_grace",
                                               "final_event_hold_ms",
                                               "metrics_paths",
                                               "reconnect",
                                               "wal",
                                               "tls",
                                               "metrics_listen",
                                               "log_format"};
const std::vector<std::string_view> kExecFields = {"allowed_commands"};
const std::vector<std::string_view> kEnsureFileFields = {"allowed_dirs", "allow_special_modes"};
const std::vector<std::string_view> kTlsFields = {"cert", "key", "ca"};
const std::vector<std::string_view> kReconnectFields = {"initial_backoff_ms", "max_backoff_ms"};
const std::vector<std::string_view> kWalFields = {"segment_size_mb", "retention_hours",
                                                  "archive_dir"};

std::string BuiltinList() {
  std::string out;
  for (const auto& b : BuiltinIntents()) out += (out.empty() ? "" : ", ") + b;
  return out;
}

bool IsBuiltin(const std::string& name) {
  const auto& b = BuiltinIntents();
  return std::find(b.begin(), b.end(), name) != b.end();
}

// One address of a comma-separated `orchestrator` value, blanks around it
// trimmed, and where it starts in the value (for the column of an error).
struct AddressEntry {
  std::string text;
  size_t offset = 0;
};

// "a:1, b:2" -> {"a:1", 0}, {"b:2", 5}. Always at least one entry: "" and
// "a:1," give an empty one, which ParseHostPort reports as such.
std::vector<AddressEntry> SplitAddresses(std::string_view value) {
  std::vector<AddressEntry> out;
  size_t start = 0;
  for (;;) {
    size_t end = value.find(',', start);
    std::string_view part = value.substr(start, end == std::string_view::npos ? end : end - start);
    size_t lead = 0;
    while (lead < part.size() && (part[lead] == ' ' || part[lead] == '\t')) ++lead;
    part.remove_prefix(lead);
    while (!part.empty() && (part.back() == ' ' || part.back() == '\t')) part.remove_suffix(1);
    out.push_back({std::string(part), start + lead});
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// "/srv/app/" -> "/srv/app"; "/" stays.
std::string TrimTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

class AgentParser {
 public:
  AgentParser(YamlReader& r, AgentConfig* c) : r_(r), c_(c) {}

  void Parse(const YAML::Node& root) {
    if (root.IsNull()) return;
    for (const Field& f : r_.Fields(root, "edge-agent config", kFields)) {
      if (Value(f)) set_[f.key] = f.value;
    }
    CrossChecks();
  }

 private:
  // Reads one top-level field into *c_; false if it was wrong (reported).
  bool Value(const Field& f);
  bool Orchestrators(const YAML::Node& n);
  bool Labels(const YAML::Node& n);
  bool Handlers(const YAML::Node& n);
  bool Reconnect(const YAML::Node& n);
  bool Wal(const YAML::Node& n);
  bool Tls(const YAML::Node& n);
  bool Exec(const YAML::Node& n);
  bool EnsureFile(const YAML::Node& n);
  void CrossChecks();

  YamlReader& r_;
  AgentConfig* c_;
  std::map<std::string, YAML::Node> set_;  // fields read without error
};

bool AgentParser::Value(const Field& f) {
  const YAML::Node& v = f.value;
  const std::string& k = f.key;
  if (k == "node_id") return internal::ReadName(r_, v, k, false, &c_->node_id);
  if (k == "labels") return Labels(v);
  if (k == "groups") {
    return internal::ReadUniqueList(
        r_, v, k,
        [&](const std::string&, const YAML::Node& n) {
          std::string ignored;
          return internal::ReadName(r_, n, "groups", true, &ignored);
        },
        &c_->groups);
  }
  if (k == "orchestrator") return Orchestrators(v);
  if (k == "wal_path") return internal::ReadPath(r_, v, k, false, &c_->wal_path);
  if (k == "state_dir") return internal::ReadPath(r_, v, k, false, &c_->state_dir);
  if (k == "heartbeat_interval") {
    return internal::ReadDuration(r_, v, k, 1s, 300s, &c_->heartbeat_interval);
  }
  if (k == "max_concurrency") {
    return internal::ReadInt(r_, v, k, 1, kMaxConcurrency, &c_->max_concurrency);
  }
  if (k == "autonomy_window") {
    return internal::ReadDuration(r_, v, k, 30s, 120s, &c_->autonomy_window);
  }
  if (k == "state_sync_interval") {
    return internal::ReadDuration(r_, v, k, 10s, 24h, &c_->state_sync_interval);
  }
  if (k == "handlers") return Handlers(v);
  if (k == "enabled_intents") {
    return internal::ReadUniqueList(
        r_, v, k,
        [&](const std::string& name, const YAML::Node& n) {
          if (IsBuiltin(name)) return true;
          r_.Error(n, "'enabled_intents' names " + Quote(name) +
                          ", which is not a built-in intent (built-ins: " + BuiltinList() +
                          "); external handlers go under 'handlers'");
          return false;
        },
        &c_->enabled_intents);
  }
  if (k == "exec") return Exec(v);
  if (k == "ensure_file") return EnsureFile(v);
  if (k == "kill_grace") return internal::ReadDuration(r_, v, k, 0s, 300s, &c_->kill_grace);
  if (k == "final_event_hold_ms") {
    int64_t ms = 0;
    if (!internal::ReadInt(r_, v, k, 0, 1000, &ms)) return false;
    c_->final_event_hold = std::chrono::milliseconds(ms);
    return true;
  }
  if (k == "metrics_paths") {
    return internal::ReadUniqueList(
        r_, v, k,
        [&](const std::string&, const YAML::Node& n) {
          std::string ignored;
          return internal::ReadPath(r_, n, "metrics_paths", true, &ignored);
        },
        &c_->metrics_paths);
  }
  if (k == "reconnect") return Reconnect(v);
  if (k == "tls") return Tls(v);
  if (k == "log_format") {
    auto s = r_.String(v, k);
    if (!s) return false;
    if (*s != "text" && *s != "json") {
      r_.Error(v, "'log_format' must be text or json, got '" + *s + "'");
      return false;
    }
    c_->log_format = *s;
    return true;
  }
  if (k == "metrics_listen") {
    if (v.IsScalar() && (v.Scalar().empty() || v.Scalar() == "off")) {
      c_->metrics_listen.reset();
      return true;
    }
    HostPort hp;
    if (!internal::ReadHostPort(r_, v, k, &hp, /*allow_any_port=*/true)) return false;
    c_->metrics_listen = hp;
    return true;
  }
  return Wal(v);  // the last of kFields but tls
}

// `orchestrator`: "host:port", "a:7011, b:7011", or a list of host:port.
// Each bad entry is reported where it is: a list entry at its node, a
// comma-separated one at its column (exact for a one-line scalar, quoted or
// not; escapes in a double-quoted value or a folded one can shift it).
bool AgentParser::Orchestrators(const YAML::Node& n) {
  std::vector<std::pair<std::string, YAML::Mark>> entries;  // in file order
  if (n.IsSequence()) {
    auto list = r_.StringList(n, "orchestrator");
    if (!list) return false;
    for (const auto& item : *list) entries.emplace_back(item.first, item.second.Mark());
    if (entries.empty()) {
      r_.Error(n, "'orchestrator' must name at least one host:port");
      return false;
    }
  } else if (n.IsScalar()) {
    // A quoted scalar's text starts one column after its quote.
    const int quote = n.Tag() == "!" ? 1 : 0;
    for (const AddressEntry& e : SplitAddresses(n.Scalar())) {
      YAML::Mark at = n.Mark();
      at.pos += quote + static_cast<int>(e.offset);
      at.column += quote + static_cast<int>(e.offset);
      entries.emplace_back(e.text, at);
    }
  } else {
    r_.Error(n,
             "'orchestrator' must be host:port, several separated by commas, or a list of "
             "host:port");
    return false;
  }
  std::vector<HostPort> addresses;
  bool ok = true;
  for (const auto& [text, at] : entries) {
    auto hp = ParseHostPort(text);
    if (!hp.ok()) {
      r_.Error(at, "'orchestrator': " + hp.status().message());
      ok = false;
    } else if (std::find(addresses.begin(), addresses.end(), *hp) != addresses.end()) {
      r_.Error(at, Quote(text) + " is listed twice in 'orchestrator'");
      ok = false;
    } else {
      addresses.push_back(*hp);
    }
  }
  if (ok) c_->orchestrators = std::move(addresses);
  return ok;
}

bool AgentParser::Labels(const YAML::Node& n) {
  auto entries = internal::MapEntries(r_, n, "labels");
  if (!entries) return false;
  std::map<std::string, std::string> labels;
  bool ok = true;
  for (const Field& e : *entries) {
    std::string value;
    if (auto p = internal::KeyProblem("labels", e.key, true); !p.empty()) {
      r_.Error(e.key_node, p);
      ok = false;
    } else if (internal::ReadName(r_, e.value, "labels." + e.key, true, &value)) {
      labels[e.key] = value;
    } else {
      ok = false;
    }
  }
  if (ok) c_->labels = std::move(labels);
  return ok;
}

bool AgentParser::Handlers(const YAML::Node& n) {
  auto entries = internal::MapEntries(r_, n, "handlers");
  if (!entries) return false;
  std::map<std::string, std::string> handlers;
  bool ok = true;
  for (const Field& e : *entries) {
    std::string path;
    if (auto p = internal::KeyProblem("handlers", e.key, false); !p.empty()) {
      r_.Error(e.key_node, p);
      ok = false;
    } else if (IsBuiltin(e.key)) {
      r_.Error(e.key_node, "'handlers." + e.key + "' clashes with the built-in intent " +
                               Quote(e.key) + "; give the external handler another name");
      ok = false;
    } else if (internal::ReadPath(r_, e.value, "handlers." + e.key, true, &path)) {
      handlers[e.key] = path;
    } else {
      ok = false;
    }
  }
  if (ok) c_->handlers = std::move(handlers);
  return ok;
}

bool AgentParser::Reconnect(const YAML::Node& n) {
  if (!internal::RequireMap(r_, n, "reconnect", "initial_backoff_ms, max_backoff_ms")) {
    return false;
  }
  bool ok = true;
  for (const Field& f : r_.Fields(n, "reconnect", kReconnectFields)) {
    int64_t ms = 0;
    bool good = internal::ReadInt(r_, f.value, "reconnect." + f.key, 1, 600'000, &ms);
    ok = ok && good;
    if (!good) continue;
    Duration d = std::chrono::milliseconds(ms);
    (f.key == "initial_backoff_ms" ? c_->reconnect.initial_backoff : c_->reconnect.max_backoff) = d;
    set_["reconnect." + f.key] = f.value;
  }
  return ok;
}

bool AgentParser::Wal(const YAML::Node& n) {
  if (!internal::RequireMap(r_, n, "wal", "segment_size_mb, retention_hours, archive_dir")) {
    return false;
  }
  bool ok = true;
  for (const Field& f : r_.Fields(n, "wal", kWalFields)) {
    const std::string name = "wal." + f.key;
    if (f.key == "segment_size_mb") {
      ok = internal::ReadInt(r_, f.value, name, 1, 4096, &c_->wal.segment_size_mb) && ok;
    } else if (f.key == "retention_hours") {
      int64_t hours = 0;
      bool good = internal::ReadInt(r_, f.value, name, 0, 10 * 365 * 24, &hours);
      if (good) c_->wal.retention = std::chrono::hours(hours);
      ok = ok && good;
    } else {  // archive_dir: "" means no archive
      auto s = r_.String(f.value, name);
      bool good = s && (s->empty() || internal::ReadPath(r_, f.value, name, false,
                                                         &c_->wal.archive_dir));
      ok = ok && good;
    }
  }
  return ok;
}

bool AgentParser::Exec(const YAML::Node& n) {
  if (!internal::RequireMap(r_, n, "exec", "allowed_commands")) return false;
  bool ok = true;
  for (const Field& f : r_.Fields(n, "exec", kExecFields)) {
    // allowed_commands: absolute paths or fnmatch globs of them.
    ok = internal::ReadUniqueList(
             r_, f.value, "exec.allowed_commands",
             [&](const std::string& p, const YAML::Node& item) {
               std::string ignored;
               if (!internal::ReadPath(r_, item, "exec.allowed_commands", true, &ignored)) {
                 return false;
               }
               if (!HasDotComponent(p)) return true;
               r_.Error(item, "'exec.allowed_commands' entry " + Quote(p) +
                                  " must not contain '.' or '..' components");
               return false;
             },
             &c_->exec.allowed_commands) &&
         ok;
  }
  return ok;
}

bool AgentParser::EnsureFile(const YAML::Node& n) {
  if (!internal::RequireMap(r_, n, "ensure_file", "allowed_dirs, allow_special_modes")) {
    return false;
  }
  bool ok = true;
  for (const Field& f : r_.Fields(n, "ensure_file", kEnsureFileFields)) {
    if (f.key == "allow_special_modes") {
      auto b = r_.Bool(f.value, "ensure_file.allow_special_modes");
      if (b) c_->ensure_file.allow_special_modes = *b;
      ok = ok && b.has_value();
      continue;
    }
    std::vector<std::string> dirs;
    bool good = internal::ReadUniqueList(
        r_, f.value, "ensure_file.allowed_dirs",
        [&](const std::string& p, const YAML::Node& item) {
          std::string ignored;
          if (!internal::ReadPath(r_, item, "ensure_file.allowed_dirs", true, &ignored)) {
            return false;
          }
          if (!HasDotComponent(p)) return true;
          r_.Error(item, "'ensure_file.allowed_dirs' entry " + Quote(p) +
                             " must not contain '.' or '..' components");
          return false;
        },
        &dirs);
    if (good) {
      c_->ensure_file.allowed_dirs.clear();
      for (auto& d : dirs) c_->ensure_file.allowed_dirs.push_back(TrimTrailingSlashes(d));
    }
    ok = ok && good;
  }
  return ok;
}

bool AgentParser::Tls(const YAML::Node& n) {
  if (!internal::RequireMap(r_, n, "tls", "cert, key, ca")) return false;
  tls::TlsPaths paths;
  bool ok = true;
  for (const Field& f : r_.Fields(n, "tls", kTlsFields)) {
    std::string* out = f.key == "cert" ? &paths.cert : f.key == "key" ? &paths.key : &paths.ca;
    ok = internal::ReadPath(r_, f.value, "tls." + f.key, false, out) && ok;
  }
  if (ok && !paths.complete()) {
    std::string missing;
    for (std::string_view m : paths.Missing()) {
      missing += (missing.empty() ? "" : ", ") + std::string(m);
    }
    r_.Error(n, "'tls' needs cert, key and ca together; missing: " + missing);
    ok = false;
  }
  if (ok) c_->tls = paths;
  return ok;
}

void AgentParser::CrossChecks() {
  // Report at whichever of the two the file set (the later one if both).
  auto at = [&](const std::string& a, const std::string& b) -> const YAML::Node* {
    if (set_.count(b)) return &set_[b];
    if (set_.count(a)) return &set_[a];
    return nullptr;
  };
  if (c_->heartbeat_interval >= c_->autonomy_window) {
    if (const YAML::Node* n = at("heartbeat_interval", "autonomy_window")) {
      r_.Error(*n, "'heartbeat_interval' (" + FormatDuration(c_->heartbeat_interval) +
                       ") must be shorter than 'autonomy_window' (" +
                       FormatDuration(c_->autonomy_window) +
                       "), or a quiet but healthy link would count as lost");
    }
  }
  if (c_->reconnect.initial_backoff > c_->reconnect.max_backoff) {
    if (const YAML::Node* n = at("reconnect.initial_backoff_ms", "reconnect.max_backoff_ms")) {
      r_.Error(*n, "'reconnect.initial_backoff_ms' must not be greater than "
                   "'reconnect.max_backoff_ms'");
    }
  }
}

// "a/b" from "a" and "b", without doubling a trailing '/'.
std::string JoinPath(const std::string& dir, std::string_view leaf) {
  if (!dir.empty() && dir.back() == '/') return dir + std::string(leaf);
  return dir + "/" + std::string(leaf);
}

Status CheckPathFlag(std::string_view flag, const std::string& v) {
  if (v.empty()) return Status::InvalidArgument(std::string(flag) + ": the path is empty");
  if (v.find('\0') != std::string::npos) {
    return Status::InvalidArgument(std::string(flag) + ": the path contains a NUL character");
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& BuiltinIntents() {
  static const std::vector<std::string> kBuiltins = {"collect_metrics", "ensure_file", "exec",
                                                     "noop", "sleep"};
  return kBuiltins;
}

const std::vector<std::string>& DefaultEnabledIntents() {
  static const std::vector<std::string> kDefault = {"collect_metrics", "ensure_file", "noop",
                                                    "sleep"};
  return kDefault;
}

AgentConfig DefaultAgentConfig(int cores) {
  AgentConfig c;
  c.max_concurrency = std::clamp(2 * std::max(cores, 1), 1, kMaxConcurrency);
  return c;
}

ParsedAgentConfig ParseAgentConfig(std::string_view content, std::string_view file_name,
                                   int cores) {
  ParsedAgentConfig out;
  out.config = DefaultAgentConfig(cores);
  internal::ParseConfigDocument(content, file_name, &out.errors,
                                [&](YamlReader& r, const YAML::Node& root) {
                                  AgentParser(r, &out.config).Parse(root);
                                });
  return out;
}

Status ApplyAgentOverrides(AgentConfig& config, const AgentOverrides& o) {
  AgentConfig c = config;  // changed only if everything is right
  std::vector<std::string> problems;
  auto fail = [&](const Status& s) {
    if (!s.ok()) problems.push_back(s.message());
    return !s.ok();
  };
  if (o.node_id) {
    if (auto p = internal::NameProblem("--node-id", *o.node_id, false); !p.empty()) {
      problems.push_back(p);
    } else {
      c.node_id = *o.node_id;
    }
  }
  for (const std::string& kv : o.labels) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      problems.push_back("--label " + Quote(kv) + ": expected key=value, e.g. --label role=worker");
      continue;
    }
    std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    std::string p = internal::NameProblem("--label key", key, true);
    if (p.empty()) p = internal::NameProblem("--label value", value, true);
    if (!p.empty()) {
      problems.push_back(p);
      continue;
    }
    c.labels[key] = value;
  }
  for (const std::string& g : o.groups) {
    if (auto p = internal::NameProblem("--group", g, true); !p.empty()) {
      problems.push_back(p);
    } else if (std::find(c.groups.begin(), c.groups.end(), g) == c.groups.end()) {
      c.groups.push_back(g);
    }
  }
  if (o.orchestrator) {
    // One host:port or several separated by commas; every bad one reported.
    std::vector<HostPort> addresses;
    bool good = true;
    for (const AddressEntry& e : SplitAddresses(*o.orchestrator)) {
      auto hp = ParseHostPort(e.text);
      if (!hp.ok()) {
        problems.push_back("--orchestrator: " + hp.status().message());
        good = false;
      } else if (std::find(addresses.begin(), addresses.end(), *hp) != addresses.end()) {
        problems.push_back("--orchestrator: " + Quote(e.text) + " is listed twice");
        good = false;
      } else {
        addresses.push_back(*hp);
      }
    }
    if (good) c.orchestrators = std::move(addresses);
  }
  if (o.log_format) {
    if (*o.log_format == "text" || *o.log_format == "json") {
      c.log_format = *o.log_format;
    } else {
      problems.push_back("--log-format: must be text or json, got '" + *o.log_format + "'");
    }
  }
  if (o.metrics_listen) {
    if (o.metrics_listen->empty() || *o.metrics_listen == "off") {
      c.metrics_listen.reset();
    } else if (auto hp = ParseHostPort(*o.metrics_listen, /*allow_any_port=*/true); !hp.ok()) {
      problems.push_back("--metrics-listen: " + hp.status().message());
    } else {
      c.metrics_listen = *hp;
    }
  }
  for (const std::string& name : o.enable_intents) {
    if (!IsBuiltin(name)) {
      problems.push_back("--enable-intent " + Quote(name) + ": not a built-in intent (built-ins: " +
                         BuiltinList() + ")");
    } else if (std::find(c.enabled_intents.begin(), c.enabled_intents.end(), name) ==
               c.enabled_intents.end()) {
      c.enabled_intents.push_back(name);
    }
  }
  if (o.wal_path && !fail(CheckPathFlag("--wal-path", *o.wal_path))) c.wal_path = *o.wal_path;
  if (o.state_dir && !fail(CheckPathFlag("--state-dir", *o.state_dir))) c.state_dir = *o.state_dir;
  if (o.tls_cert && !fail(CheckPathFlag("--tls-cert", *o.tls_cert))) c.tls.cert = *o.tls_cert;
  if (o.tls_key && !fail(CheckPathFlag("--tls-key", *o.tls_key))) c.tls.key = *o.tls_key;
  if (o.tls_ca && !fail(CheckPathFlag("--tls-ca", *o.tls_ca))) c.tls.ca = *o.tls_ca;
  if (problems.empty() && c.tls.any() && !c.tls.complete()) {
    std::string missing;
    for (std::string_view m : c.tls.Missing()) {
      missing += (missing.empty() ? "--tls-" : ", --tls-") + std::string(m);
    }
    problems.push_back("TLS needs --tls-cert, --tls-key and --tls-ca together (or all three in "
                       "the config's tls block); missing: " + missing);
  }
  if (!problems.empty()) {
    std::string m;
    for (const auto& p : problems) m += (m.empty() ? "" : "\n") + p;
    return Status::InvalidArgument(m);
  }
  APOLLO_RETURN_IF_ERROR(FinishAgentConfig(c));
  config = std::move(c);
  return Status::Ok();
}

Status FinishAgentConfig(AgentConfig& c) {
  if (c.node_id.empty()) {
    return Status::InvalidArgument(
        "node_id is not set: set 'node_id' in the config file or pass --node-id");
  }
  if (c.wal_path.empty()) c.wal_path = JoinPath(c.state_dir, "wal");
  return Status::Ok();
}

Result<AgentConfig> LoadAgentConfig(const std::string& path, const AgentOverrides& overrides,
                                    int cores) {
  if (path.empty() && !overrides.node_id) {
    return Status::NotFound("no config file given: pass --config FILE, or at least --node-id");
  }
  auto content = path.empty() ? Result<std::string>(Status::NotFound("no config file"))
                              : ReadConfigFile(path);
  AgentConfig config = DefaultAgentConfig(cores);
  if (content.ok()) {
    ParsedAgentConfig parsed = ParseAgentConfig(*content, path, cores);
    if (!parsed.ok()) return Status::InvalidArgument(JoinDiagnostics(parsed.errors));
    config = std::move(parsed.config);
  } else if (content.status().code() != StatusCode::kNotFound || !overrides.node_id) {
    if (content.status().code() != StatusCode::kNotFound) return content.status();
    return Status::NotFound(content.status().message() +
                            " (without a config file, pass at least --node-id)");
  }
  APOLLO_RETURN_IF_ERROR(ApplyAgentOverrides(config, overrides));
  return config;
}

}  // namespace apollo::agent
