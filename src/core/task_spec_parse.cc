// ParseTaskFile: YAML text -> validated TaskSpecs, or every problem at once.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/dag.h"
#include "core/task_id.h"
#include "core/task_spec.h"
#include "core/yaml_reader.h"

namespace apollo {
namespace {

using internal::Field;
using internal::Quote;
using internal::YamlReader;

constexpr int64_t kMaxTimeoutSeconds = 30LL * 24 * 3600;  // 30 days
constexpr int64_t kMaxIntervalSeconds = 24 * 3600;        // 1 day
constexpr int64_t kMaxRetries = 100;
constexpr size_t kMaxNameLength = 128;

const std::vector<std::string_view> kTaskFields = {
    "task_id",      "intent",   "target_selector", "timeout",  "retry_policy", "depends_on",
    "callback_url", "metadata", "params",          "priority", "start_timeout", "on_failure"};
const std::vector<std::string_view> kSelectorFields = {"type", "key",   "value",
                                                       "group", "nodes", "allow_empty"};
const std::vector<std::string_view> kRetryFields = {
    "max_retries", "initial_interval", "max_interval", "backoff", "jitter", "preset", "tiers"};
const std::vector<std::string_view> kTierFields = {"name",         "max_retries", "initial_interval",
                                                   "max_interval", "backoff",     "jitter",
                                                   "preset"};
const std::vector<std::string_view> kCompensationFields = {"intent", "params", "timeout"};

// A name (intent, label key/value, group, node id): the task_id alphabet.
std::string NameProblem(std::string_view what, std::string_view v) {
  if (v.empty()) return "'" + std::string(what) + "' must not be empty";
  if (v.size() > kMaxNameLength) {
    return "'" + std::string(what) + "' is longer than " + std::to_string(kMaxNameLength) +
           " characters";
  }
  for (char c : v) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == '/';
    if (!ok) {
      return "'" + std::string(what) + "' " + Quote(v) +
             " has characters that are not allowed (letters, digits, '.', '_', '-', '/')";
    }
  }
  return {};
}

class TaskParser {
 public:
  TaskParser(YamlReader& r, const RetryPresets& presets) : r_(r), presets_(presets) {}

  // Returns the spec, or nullopt if this task had errors (all reported).
  std::optional<TaskSpec> Parse(const YAML::Node& n);

 private:
  bool Selector(const YAML::Node& n, TargetSelector* out);
  bool Retry(const YAML::Node& n, RetryPolicy* out);
  // One tier (`what` names it in messages): explicit fields, or {preset: N}.
  bool Tier(const YAML::Node& n, const std::string& what, std::vector<RetryTier>* out);
  // The tiers of preset `name` at `n`, or a diagnostic listing the known ones.
  bool PresetTiers(const YAML::Node& n, const std::string& name, std::vector<RetryTier>* out);
  // The single-tier fields of `fields` into `out` (prefix: "retry_policy").
  bool TierFields(const std::vector<internal::Field>& fields, const std::string& prefix, RetryTier* out);
  bool Compensation(const YAML::Node& n, CompensationSpec* out);
  // An integer in [min, max]; `unit` ("seconds", "") follows it in messages.
  bool Ranged(const YAML::Node& n, std::string_view name, int64_t min, int64_t max,
              std::string_view unit, int64_t* out);
  bool Seconds(const YAML::Node& n, std::string_view name, int64_t min, int64_t max,
               int64_t* out) {
    return Ranged(n, name, min, max, " seconds", out);
  }
  bool Name(const YAML::Node& n, std::string_view what, std::string* out);
  bool Metadata(const YAML::Node& n, std::map<std::string, std::string>* out);
  bool Field(const Field& f, TaskSpec* spec, std::vector<std::pair<std::string, YAML::Node>>* deps);

  YamlReader& r_;
  const RetryPresets& presets_;
};

bool TaskParser::Name(const YAML::Node& n, std::string_view what, std::string* out) {
  auto s = r_.String(n, what);
  if (!s) return false;
  if (auto p = NameProblem(what, *s); !p.empty()) {
    r_.Error(n, p);
    return false;
  }
  *out = *s;
  return true;
}

bool TaskParser::Ranged(const YAML::Node& n, std::string_view name, int64_t min, int64_t max,
                        std::string_view unit, int64_t* out) {
  auto v = r_.Integer(n, name);
  if (!v) return false;
  if (*v < min || *v > max) {
    r_.Error(n, "'" + std::string(name) + "' must be between " + std::to_string(min) + " and " +
                    std::to_string(max) + std::string(unit) + ", got " + std::to_string(*v));
    return false;
  }
  *out = *v;
  return true;
}

bool TaskParser::Selector(const YAML::Node& n, TargetSelector* out) {
  if (!n.IsMap()) {
    r_.Error(n, "'target_selector' must be a mapping with 'type' (label, group or nodes)");
    return false;
  }
  std::map<std::string, YAML::Node> f;
  for (auto& field : r_.Fields(n, "target_selector", kSelectorFields)) f[field.key] = field.value;
  bool ok = true;
  if (!f.count("type")) {
    r_.Error(n, "'target_selector' is missing 'type' (label, group or nodes)");
    return false;
  }
  auto type = r_.String(f["type"], "target_selector.type");
  if (!type) return false;
  // Which fields each type needs; any other type-specific field is an error.
  std::vector<std::string_view> needs;
  if (*type == "label") {
    out->type = SelectorType::kLabel;
    needs = {"key", "value"};
  } else if (*type == "group") {
    out->type = SelectorType::kGroup;
    needs = {"group"};
  } else if (*type == "nodes") {
    out->type = SelectorType::kNodes;
    needs = {"nodes"};
  } else {
    r_.Error(f["type"], "'target_selector.type' must be label, group or nodes, got " + Quote(*type));
    return false;
  }
  for (std::string_view k : {"key", "value", "group", "nodes"}) {
    bool needed = std::find(needs.begin(), needs.end(), k) != needs.end();
    if (needed && !f.count(std::string(k))) {
      r_.Error(n, "'target_selector' of type " + *type + " needs '" + std::string(k) + "'");
      ok = false;
    } else if (!needed && f.count(std::string(k))) {
      r_.Error(f[std::string(k)], "'target_selector." + std::string(k) +
                                      "' does not apply to type " + *type);
      ok = false;
    }
  }
  if (!ok) return false;
  if (out->type == SelectorType::kLabel) {
    ok = Name(f["key"], "target_selector.key", &out->key) &
         Name(f["value"], "target_selector.value", &out->value);
  } else if (out->type == SelectorType::kGroup) {
    ok = Name(f["group"], "target_selector.group", &out->group);
  } else {
    auto list = r_.StringList(f["nodes"], "target_selector.nodes");
    if (!list) return false;
    if (list->empty()) {
      r_.Error(f["nodes"], "'target_selector.nodes' must name at least one node");
      return false;
    }
    std::set<std::string> seen;
    for (auto& [id, node] : *list) {
      if (auto p = NameProblem("target_selector.nodes", id); !p.empty()) {
        r_.Error(node, p);
        ok = false;
      } else if (!seen.insert(id).second) {
        r_.Error(node, "node " + Quote(id) + " is listed twice in 'target_selector.nodes'");
        ok = false;
      } else {
        out->nodes.push_back(id);
      }
    }
  }
  if (f.count("allow_empty")) {
    auto b = r_.Bool(f["allow_empty"], "target_selector.allow_empty");
    ok = ok && b.has_value();
    if (b) out->allow_empty = *b;
  }
  return ok;
}

bool TaskParser::PresetTiers(const YAML::Node& n, const std::string& name,
                             std::vector<RetryTier>* out) {
  auto it = presets_.find(name);
  if (it == presets_.end()) {
    std::string known;
    for (const auto& [k, v] : presets_) known += (known.empty() ? "" : ", ") + k;
    r_.Error(n, "unknown retry preset " + Quote(name) + " (known: " + known + ")");
    return false;
  }
  if (it->second.tiers.empty()) {
    out->push_back(it->second.AsTier(name));
  } else {
    out->insert(out->end(), it->second.tiers.begin(), it->second.tiers.end());
  }
  return true;
}

bool TaskParser::TierFields(const std::vector<internal::Field>& fields, const std::string& prefix,
                            RetryTier* out) {
  bool ok = true;
  bool have_initial = false, have_max = false;
  YAML::Node initial_node;
  int64_t v = 0;
  for (const internal::Field& f : fields) {
    const std::string name = prefix + "." + f.key;
    if (f.key == "max_retries") {
      ok = Ranged(f.value, name, 0, kMaxRetries, "", &v) && ok;
      out->max_retries = static_cast<int>(v);
    } else if (f.key == "initial_interval") {
      have_initial = Seconds(f.value, name, 0, kMaxIntervalSeconds, &v);
      initial_node = f.value;
      ok = ok && have_initial;
      out->initial_interval = std::chrono::seconds(v);
    } else if (f.key == "max_interval") {
      have_max = Seconds(f.value, name, 0, kMaxIntervalSeconds, &v);
      ok = ok && have_max;
      out->max_interval = std::chrono::seconds(v);
    } else if (f.key == "backoff") {
      auto s = r_.String(f.value, name);
      auto b = s ? ParseBackoff(*s) : std::nullopt;
      if (s && !b) r_.Error(f.value, "'" + name + "' must be exponential or fixed, got " + Quote(*s));
      ok = ok && b.has_value();
      if (b) out->backoff = *b;
    } else if (f.key == "jitter") {
      auto b = r_.Bool(f.value, name);
      ok = ok && b.has_value();
      if (b) out->jitter = *b;
    } else if (f.key == "name") {
      ok = Name(f.value, name, &out->name) && ok;
    }
  }
  if (have_initial && have_max && out->initial_interval > out->max_interval) {
    r_.Error(initial_node, "'" + prefix + ".initial_interval' (" +
                               std::to_string(out->initial_interval.count()) +
                               ") is greater than '" + prefix + ".max_interval' (" +
                               std::to_string(out->max_interval.count()) + ")");
    ok = false;
  }
  return ok;
}

bool TaskParser::Tier(const YAML::Node& n, const std::string& what, std::vector<RetryTier>* out) {
  if (!n.IsMap()) {
    r_.Error(n, "'" + what + "' must be a mapping ({preset: NAME} or max_retries, "
                "initial_interval, max_interval, backoff)");
    return false;
  }
  std::vector<internal::Field> fields = r_.Fields(n, what, kTierFields);
  for (const internal::Field& f : fields) {
    if (f.key != "preset") continue;
    if (fields.size() > 1) {
      r_.Error(f.key_node, "'" + what + ".preset' stands alone: a preset sets every field");
      return false;
    }
    auto name = r_.String(f.value, what + ".preset");
    return name && PresetTiers(f.value, *name, out);
  }
  RetryTier tier;
  if (!TierFields(fields, what, &tier)) return false;
  out->push_back(std::move(tier));
  return true;
}

bool TaskParser::Retry(const YAML::Node& n, RetryPolicy* out) {
  if (!n.IsMap()) {
    r_.Error(n, "'retry_policy' must be a mapping ({preset: fast|slow|...}, {tiers: [...]}, or "
                "max_retries, initial_interval, max_interval, backoff)");
    return false;
  }
  std::vector<internal::Field> fields = r_.Fields(n, "retry_policy", kRetryFields);
  for (const internal::Field& f : fields) {
    if (f.key != "preset" && f.key != "tiers") continue;
    if (fields.size() > 1) {
      r_.Error(f.key_node, "'retry_policy." + f.key + "' stands alone: it sets every field");
      return false;
    }
    std::vector<RetryTier> tiers;
    if (f.key == "preset") {
      auto name = r_.String(f.value, "retry_policy.preset");
      if (!name || !PresetTiers(f.value, *name, &tiers)) return false;
    } else {
      if (!f.value.IsSequence() || f.value.size() == 0) {
        r_.Error(f.value, "'retry_policy.tiers' must be a non-empty list of tiers");
        return false;
      }
      bool ok = true;
      for (size_t i = 0; i < f.value.size(); ++i) {
        ok = Tier(f.value[i], "retry_policy.tiers[" + std::to_string(i) + "]", &tiers) && ok;
      }
      if (!ok) return false;
    }
    *out = RetryPolicy::Tiered(std::move(tiers));
    return true;
  }
  RetryTier tier = RetryPolicy{}.AsTier("");
  if (!TierFields(fields, "retry_policy", &tier)) return false;
  out->max_retries = tier.max_retries;
  out->initial_interval = tier.initial_interval;
  out->max_interval = tier.max_interval;
  out->backoff = tier.backoff;
  out->jitter = tier.jitter;
  out->tiers.clear();
  return true;
}

bool TaskParser::Compensation(const YAML::Node& n, CompensationSpec* out) {
  if (!n.IsMap()) {
    r_.Error(n, "'on_failure' must be a mapping with 'intent' (and optional params, timeout)");
    return false;
  }
  bool ok = true, have_intent = false;
  for (auto& f : r_.Fields(n, "on_failure", kCompensationFields)) {
    if (f.key == "intent") {
      have_intent = Name(f.value, "on_failure.intent", &out->intent);
      ok = ok && have_intent;
    } else if (f.key == "params") {
      if (!f.value.IsMap()) {
        r_.Error(f.value, "'on_failure.params' must be a mapping");
        ok = false;
        continue;
      }
      auto j = r_.Json(f.value, "on_failure.params");
      if (j) out->params = std::move(*j);
      ok = ok && j.has_value();
    } else if (f.key == "timeout") {
      int64_t t = 0;
      ok = Seconds(f.value, "on_failure.timeout", 1, kMaxTimeoutSeconds, &t) && ok;
      out->timeout = std::chrono::seconds(t);
    }
  }
  if (!have_intent && ok) {
    r_.Error(n, "'on_failure' needs an 'intent' (the compensation to run)");
    ok = false;
  }
  return ok;
}

bool TaskParser::Metadata(const YAML::Node& n, std::map<std::string, std::string>* out) {
  if (!n.IsMap()) {
    r_.Error(n, "'metadata' must be a mapping of names to strings");
    return false;
  }
  bool ok = true;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) {
      r_.Error(kv.first, "a key of metadata must be a plain name");
      ok = false;
      continue;
    }
    const std::string& key = kv.first.Scalar();
    if (!(kv.second.IsScalar() || kv.second.IsNull())) {
      r_.Error(kv.second, "'metadata." + key + "' must be a string, not a list or mapping");
      ok = false;
      continue;
    }
    if (out->count(key)) {
      r_.Error(kv.first, "duplicate field " + Quote(key) + " in metadata");
      ok = false;
      continue;
    }
    (*out)[key] = kv.second.IsNull() ? "" : kv.second.Scalar();
  }
  size_t bytes = nlohmann::json(*out).dump().size();
  if (ok && bytes > r_.limits().max_payload_bytes) {
    r_.Error(n, "'metadata' is " + std::to_string(bytes) + " bytes once serialized; the limit is " +
                    std::to_string(r_.limits().max_payload_bytes));
    ok = false;
  }
  return ok;
}

bool TaskParser::Field(const internal::Field& f, TaskSpec* spec,
                       std::vector<std::pair<std::string, YAML::Node>>* deps) {
  const YAML::Node& v = f.value;
  if (f.key == "task_id") {
    auto s = r_.String(v, "task_id");
    if (!s) return false;
    if (auto p = TaskIdProblem(*s); !p.empty()) {
      r_.Error(v, "invalid task_id " + Quote(*s) + ": " + p);
      return false;
    }
    spec->task_id = *s;
    return true;
  }
  if (f.key == "intent") return Name(v, "intent", &spec->intent);
  if (f.key == "target_selector") return Selector(v, &spec->target_selector);
  if (f.key == "timeout") {
    int64_t t = 0;
    bool ok = Seconds(v, "timeout", 1, kMaxTimeoutSeconds, &t);
    spec->timeout = std::chrono::seconds(t);
    return ok;
  }
  if (f.key == "retry_policy") return Retry(v, &spec->retry_policy);
  if (f.key == "start_timeout") {
    int64_t t = 0;
    bool ok = Seconds(v, "start_timeout", 0, kMaxTimeoutSeconds, &t);
    spec->start_timeout = std::chrono::seconds(t);
    return ok;
  }
  if (f.key == "on_failure") {
    CompensationSpec c;
    bool ok = Compensation(v, &c);
    if (ok) spec->on_failure = std::move(c);
    return ok;
  }
  if (f.key == "depends_on") {
    auto list = r_.StringList(v, "depends_on");
    if (!list) return false;
    bool ok = true;
    for (auto& [id, node] : *list) {
      if (auto p = TaskIdProblem(id); !p.empty()) {
        r_.Error(node, "'depends_on' entry " + Quote(id) + " is not a valid task_id: " + p);
        ok = false;
        continue;
      }
      if (std::find(spec->depends_on.begin(), spec->depends_on.end(), id) != spec->depends_on.end()) {
        r_.Error(node, "'depends_on' lists " + Quote(id) + " twice");
        ok = false;
        continue;
      }
      spec->depends_on.push_back(id);
      deps->emplace_back(id, node);
    }
    return ok;
  }
  if (f.key == "callback_url") {
    auto s = r_.String(v, "callback_url");
    if (!s) return false;
    bool http = s->rfind("http://", 0) == 0 && s->size() > 7;
    bool https = s->rfind("https://", 0) == 0 && s->size() > 8;
    if (!http && !https) {
      r_.Error(v, "'callback_url' must be an http:// or https:// URL, got " + Quote(*s));
      return false;
    }
    spec->callback_url = *s;
    return true;
  }
  if (f.key == "metadata") return Metadata(v, &spec->metadata);
  if (f.key == "params") {
    if (!v.IsMap()) {
      r_.Error(v, "'params' must be a mapping");
      return false;
    }
    auto j = r_.Json(v, "params");
    if (j) spec->params = std::move(*j);
    return j.has_value();
  }
  if (f.key == "priority") {
    auto s = r_.String(v, "priority");
    if (!s) return false;
    if (*s == "high") spec->priority = Priority::kHigh;
    else if (*s == "normal") spec->priority = Priority::kNormal;
    else if (*s == "low") spec->priority = Priority::kLow;
    else {
      r_.Error(v, "'priority' must be high, normal or low, got " + Quote(*s));
      return false;
    }
    return true;
  }
  return false;  // Fields() only hands out known keys
}

std::optional<TaskSpec> TaskParser::Parse(const YAML::Node& n) {
  if (!n.IsMap()) {
    r_.Error(n, "a task must be a mapping of fields (task_id, intent, target_selector, ...)");
    return std::nullopt;
  }
  TaskSpec spec;
  bool ok = true;
  std::set<std::string> present;
  std::vector<std::pair<std::string, YAML::Node>> deps;
  for (auto& f : r_.Fields(n, "task", kTaskFields)) {
    present.insert(f.key);
    ok = Field(f, &spec, &deps) && ok;
  }
  if (!present.count("retry_policy")) spec.retry_policy = DefaultRetryPolicy(presets_);
  for (std::string_view req : {"intent", "target_selector", "timeout"}) {
    if (!present.count(std::string(req))) {
      r_.Error(n, "missing required field '" + std::string(req) + "'");
      ok = false;
    }
  }
  if (!present.count("task_id")) spec.task_id_generated = true;
  if (!ok) return std::nullopt;
  return spec;
}

// The value of `key` in mapping `map`, or `map` itself when absent (so a
// diagnostic still has a position).
YAML::Node FieldValue(const YAML::Node& map, std::string_view key) {
  for (const auto& kv : map) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  return map;
}

// Across the tasks of one file: duplicate ids, unknown deps, cycles.
void CheckGraph(YamlReader& r, const std::vector<std::pair<TaskSpec, YAML::Node>>& tasks,
                const ExternalTaskLookup& external) {
  std::map<std::string, YAML::Mark> first;
  std::vector<DagNode> dag;
  for (const auto& [spec, node] : tasks) {
    if (spec.task_id_generated) {
      // Nothing can depend on an id that does not exist yet.
      dag.push_back({"", spec.depends_on});
      continue;
    }
    auto [it, fresh] = first.emplace(spec.task_id, FieldValue(node, "task_id").Mark());
    if (!fresh) {
      r.Error(FieldValue(node, "task_id"), "duplicate task_id " + Quote(spec.task_id) + " (first defined at line " +
                        std::to_string(it->second.line + 1) + ")");
    }
    dag.push_back({spec.task_id, spec.depends_on});
  }
  for (const auto& [spec, node] : tasks) {
    for (const auto& dep : spec.depends_on) {
      if (first.count(dep) || (external && external(dep))) continue;
      // Point at the entry itself.
      YAML::Mark at = node.Mark();
      for (const auto& e : FieldValue(node, "depends_on")) {
        if (e.IsScalar() && e.Scalar() == dep) at = e.Mark();
      }
      r.Error(at, "'depends_on' names unknown task " + Quote(dep) +
                      " (not in this file" + (external ? " nor in the store)" : ")"));
    }
  }
  if (auto cycle = FindCycle(dag)) {
    r.Error(first[cycle->front()], "dependency cycle: " + FormatCycle(*cycle));
  }
}

}  // namespace

ParsedTasks ParseTaskFile(std::string_view content, std::string_view file_name,
                          const ParseLimits& limits, const ExternalTaskLookup& external,
                          const RetryPresets* presets) {
  ParsedTasks result;
  YamlReader r(file_name, limits, &result.errors);
  if (content.size() > limits.max_file_bytes) {
    r.Error(YAML::Mark(), "file is " + std::to_string(content.size()) +
                              " bytes; the limit is " + std::to_string(limits.max_file_bytes));
    return result;
  }
  try {
    YAML::Node root = YAML::Load(std::string(content));
    if (!r.CheckBounds(root)) return result;
    if (root.IsNull()) {
      r.Error(root, "the file is empty; expected a task or 'tasks: [...]'");
      return result;
    }
    if (!root.IsMap()) {
      r.Error(root, "expected a task (a mapping of fields) or 'tasks: [...]'");
      return result;
    }
    std::vector<YAML::Node> task_nodes;
    bool is_list = false;
    for (const auto& kv : root) {
      is_list = is_list || (kv.first.IsScalar() && kv.first.Scalar() == "tasks");
    }
    if (is_list) {
      auto fields = r.Fields(root, "a task list file", {"tasks"});
      if (fields.empty()) return result;
      const YAML::Node& list = fields.front().value;
      if (!list.IsSequence() || list.size() == 0) {
        r.Error(list, "'tasks' must be a non-empty list of tasks");
        return result;
      }
      if (list.size() > limits.max_tasks) {
        r.Error(list, "'tasks' has " + std::to_string(list.size()) + " tasks; the limit is " +
                          std::to_string(limits.max_tasks));
        return result;
      }
      for (const auto& t : list) task_nodes.push_back(t);
    } else {
      task_nodes.push_back(root);
    }
    TaskParser parser(r, presets ? *presets : BuiltinRetryPresets());
    std::vector<std::pair<TaskSpec, YAML::Node>> parsed;
    for (const auto& n : task_nodes) {
      if (auto spec = parser.Parse(n)) parsed.emplace_back(std::move(*spec), n);
    }
    CheckGraph(r, parsed, external);
    if (result.errors.empty()) {
            for (auto& p : parsed) {
        YAML::Mark at = FieldValue(p.second, "intent").Mark();
        result.intent_at.push_back({at.line + 1, at.column + 1});
        result.tasks.push_back(std::move(p.first));
      }
    }
  } catch (const YAML::Exception& e) {
    r.Error(e.mark, "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    r.Error(YAML::Mark(), std::string("could not read the file: ") + e.what());
  }
  std::stable_sort(result.errors.begin(), result.errors.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.line, a.column) < std::tie(b.line, b.column);
                   });
  return result;
}

}  // namespace apollo
