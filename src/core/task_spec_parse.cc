// ParseTaskFile: YAML text -> validated TaskSpecs, or every problem at once.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/config_values.h"
#include "core/task_spec.h"
#include "core/task_spec_rules.h"
#include "core/yaml_reader.h"

namespace apollo {
namespace {

using internal::Field;
using internal::kMaxIntervalSeconds;
using internal::kMaxRetries;
using internal::kMaxTimeoutSeconds;
using internal::NameProblem;
using internal::Quote;
using internal::YamlReader;

const std::vector<std::string_view> kTaskFields = {
    "task_id",       "intent",       "target_selector", "timeout", "retry_policy",
    "depends_on",    "callback_url", "metadata",        "params",  "priority",
    "start_timeout", "on_failure",   "rollout"};
const std::vector<std::string_view> kSelectorFields = {"type",  "key",         "value", "group",
                                                       "nodes", "allow_empty", "follow"};
const std::vector<std::string_view> kRolloutFields = {
    "batch_size",          "canary",       "canary_wait", "pause_between",
    "max_fail_percentage", "max_failures", "on_breach"};
const std::vector<std::string_view> kRetryFields = {
    "max_retries", "initial_interval", "max_interval", "backoff", "jitter", "preset", "tiers"};
const std::vector<std::string_view> kTierFields = {"name",         "max_retries", "initial_interval",
                                                   "max_interval", "backoff",     "jitter",
                                                   "preset"};
const std::vector<std::string_view> kCompensationFields = {"intent", "params", "timeout"};

class TaskParser {
 public:
  TaskParser(YamlReader& r, const RetryPresets& presets) : r_(r), presets_(presets) {}

  // Returns the spec, or nullopt if this task had errors (all reported).
  // *written: its retry_policy as written (nullopt: none).
  std::optional<TaskSpec> Parse(const YAML::Node& n, std::optional<RetryPolicySource>* written);

 private:
  bool Selector(const YAML::Node& n, TargetSelector* out);
  bool Retry(const YAML::Node& n, RetryPolicySource* written, RetryPolicy* out);
  // One tier (`what` names it in messages): explicit fields, or {preset: N}
  // (*preset_at: where the preset's name is).
  bool Tier(const YAML::Node& n, const std::string& what, RetryTierSource* out,
            YAML::Node* preset_at);
  // The single-tier fields of `fields` into `out` (prefix: "retry_policy").
  bool TierFields(const std::vector<internal::Field>& fields, const std::string& prefix, RetryTier* out);
  bool Compensation(const YAML::Node& n, CompensationSpec* out);
  bool Rollout(const YAML::Node& n, RolloutSpec* out);
  // An integer in [min, max]; `unit` ("seconds", "") follows it in messages.
  bool Ranged(const YAML::Node& n, std::string_view name, int64_t min, int64_t max,
              std::string_view unit, int64_t* out);
  // A number of seconds (30) or a duration in whole seconds (30s, 5m,
  // 1h30m), as the config files take them.
  bool Seconds(const YAML::Node& n, std::string_view name, int64_t min, int64_t max, int64_t* out);
  bool Name(const YAML::Node& n, std::string_view what, std::string* out);
  bool Metadata(const YAML::Node& n, std::map<std::string, std::string>* out);
  bool Field(const Field& f, TaskSpec* spec, std::optional<RetryPolicySource>* written);

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
  if (auto p = internal::RangeProblem(name, *v, min, max, unit); !p.empty()) {
    r_.Error(n, p);
    return false;
  }
  *out = *v;
  return true;
}

bool TaskParser::Seconds(const YAML::Node& n, std::string_view name, int64_t min, int64_t max,
                         int64_t* out) {
  // A plain integer keeps the integer's own diagnostics (e.g. a negative value).
  if (!n.IsScalar() || n.Scalar().empty() ||
      n.Scalar().find_first_not_of("+-0123456789") == std::string::npos) {
    return Ranged(n, name, min, max, " seconds", out);
  }
  auto d = ParseDuration(n.Scalar());
  if (!d.ok()) {
    r_.Error(n, "'" + std::string(name) +
                    "' must be seconds or a duration (30, 30s, 5m, 1h), got " + Quote(n.Scalar()));
    return false;
  }
  if (*d % std::chrono::seconds(1) != Duration::zero()) {
    r_.Error(n, "'" + std::string(name) + "' must be whole seconds, got " + Quote(n.Scalar()));
    return false;
  }
  const int64_t secs = std::chrono::duration_cast<std::chrono::seconds>(*d).count();
  if (auto p = internal::RangeProblem(name, secs, min, max, " seconds"); !p.empty()) {
    r_.Error(n, p);
    return false;
  }
  *out = secs;
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
    r_.Error(n, internal::SelectorTypeMissingProblem());
    return false;
  }
  auto type = r_.String(f["type"], "target_selector.type");
  if (!type) return false;
  auto parsed_type = internal::ParseSelectorType(*type);
  if (!parsed_type) {
    r_.Error(f["type"], internal::SelectorTypeProblem(*type));
    return false;
  }
  out->type = *parsed_type;
  // Which fields the type needs; any other type-specific field is an error.
  auto given = [&](std::string_view k) { return f.count(std::string(k)) > 0; };
  for (const auto& p : internal::SelectorFieldProblems(out->type, given)) {
    r_.Error(p.field.empty() ? n : f[p.field], p.message);
    ok = false;
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
      r_.Error(f["nodes"], internal::EmptyNodesProblem());
      return false;
    }
    std::set<std::string, std::less<>> seen;
    for (auto& [id, node] : *list) {
      if (auto p = internal::NodeEntryProblem(id, seen); !p.empty()) {
        r_.Error(node, p);
        ok = false;
      } else {
        seen.insert(id);
        out->nodes.push_back(id);
      }
    }
  }
  if (f.count("allow_empty")) {
    auto b = r_.Bool(f["allow_empty"], "target_selector.allow_empty");
    ok = ok && b.has_value();
    if (b) out->allow_empty = *b;
  }
  if (f.count("follow")) {
    auto b = r_.Bool(f["follow"], "target_selector.follow");
    ok = ok && b.has_value();
    if (b) out->follow = *b;
    if (b && *b) {
      if (auto p = internal::FollowProblem(out->type); !p.empty()) {
        r_.Error(f["follow"], p);
        ok = false;
      }
    }
  }
  return ok;
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
      if (s && !b) r_.Error(f.value, internal::BackoffProblem(name, *s));
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
  if (have_initial && have_max) {
    if (auto p = internal::IntervalOrderProblem(prefix, *out); !p.empty()) {
      r_.Error(initial_node, p);
      ok = false;
    }
  }
  return ok;
}

bool TaskParser::Tier(const YAML::Node& n, const std::string& what, RetryTierSource* out,
                      YAML::Node* preset_at) {
  if (!n.IsMap()) {
    r_.Error(n, "'" + what + "' must be a mapping ({preset: NAME} or max_retries, "
                "initial_interval, max_interval, backoff)");
    return false;
  }
  std::vector<internal::Field> fields = r_.Fields(n, what, kTierFields);
  for (const internal::Field& f : fields) {
    if (f.key != "preset") continue;
    if (fields.size() > 1) {
      r_.Error(f.key_node, internal::StandsAloneProblem(what + ".preset", /*tier=*/true));
      return false;
    }
    auto name = r_.String(f.value, what + ".preset");
    if (!name) return false;
    out->preset = *name;
    *preset_at = f.value;
    return true;
  }
  return TierFields(fields, what, &out->tier);
}

bool TaskParser::Retry(const YAML::Node& n, RetryPolicySource* written, RetryPolicy* out) {
  if (!n.IsMap()) {
    r_.Error(n, "'retry_policy' must be a mapping ({preset: fast|slow|...}, {tiers: [...]}, or "
                "max_retries, initial_interval, max_interval, backoff)");
    return false;
  }
  std::vector<internal::Field> fields = r_.Fields(n, "retry_policy", kRetryFields);
  bool ok = true;
  std::vector<YAML::Node> preset_at;  // where each preset is named: [0] the policy's, else per tier
  for (const internal::Field& f : fields) {
    if (f.key != "preset" && f.key != "tiers") continue;
    if (fields.size() > 1) {
      r_.Error(f.key_node, internal::StandsAloneProblem("retry_policy." + f.key, /*tier=*/false));
      return false;
    }
    if (f.key == "preset") {
      auto name = r_.String(f.value, "retry_policy.preset");
      if (!name) return false;
      written->preset = *name;
      preset_at.push_back(f.value);
    } else {
      if (!f.value.IsSequence() || f.value.size() == 0) {
        r_.Error(f.value, internal::EmptyTiersProblem());
        return false;
      }
      for (size_t i = 0; i < f.value.size(); ++i) {
        RetryTierSource tier;
        YAML::Node at;
        if (Tier(f.value[i], "retry_policy.tiers[" + std::to_string(i) + "]", &tier, &at)) {
          written->tiers.push_back(std::move(tier));
          preset_at.push_back(at);
        } else {
          ok = false;
        }
      }
    }
    break;
  }
  if (!written->preset && written->tiers.empty() && ok) {
    written->fields = RetryPolicy{}.AsTier("");
    if (!TierFields(fields, "retry_policy", &written->fields)) return false;
  }
  // Every unknown preset is reported, even beside a tier with other errors.
  for (auto& [i, p] : internal::ResolveRetryPolicy(*written, presets_, out)) {
    r_.Error(preset_at[i < 0 ? 0 : static_cast<size_t>(i)], p);
    ok = false;
  }
  return ok;
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
        r_.Error(f.value, internal::NotMappingProblem("on_failure.params"));
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
    r_.Error(n, internal::CompensationIntentMissingProblem());
    ok = false;
  }
  return ok;
}

bool TaskParser::Rollout(const YAML::Node& n, RolloutSpec* out) {
  if (!n.IsMap()) {
    r_.Error(n,
             "'rollout' must be a mapping (batch_size, canary, canary_wait, pause_between, "
             "max_fail_percentage or max_failures, on_breach)");
    return false;
  }
  bool ok = true, have_batch = false, have_wait = false;
  std::map<std::string, YAML::Node> at;
  int64_t v = 0;
  for (auto& f : r_.Fields(n, "rollout", kRolloutFields)) {
    const std::string name = "rollout." + f.key;
    at[f.key] = f.value;
    if (f.key == "batch_size") {
      auto s = r_.String(f.value, name);
      if (!s) {
        ok = false;
        continue;
      }
      if (auto p = internal::BatchSizeProblem(*s, &out->batch_size, &out->batch_percent);
          !p.empty()) {
        r_.Error(f.value, p);
        ok = false;
        continue;
      }
      have_batch = true;
    } else if (f.key == "canary") {
      ok = Ranged(f.value, name, 0, internal::kMaxRolloutNodes, "", &v) && ok;
      out->canary = static_cast<int>(v);
    } else if (f.key == "canary_wait") {
      have_wait = true;
      if (f.value.IsScalar() && f.value.Scalar() == "approve") {
        out->canary_approve = true;
        continue;
      }
      if (!f.value.IsScalar() || !Seconds(f.value, name, 0, kMaxTimeoutSeconds, &v)) {
        if (!f.value.IsScalar()) r_.Error(f.value, internal::CanaryWaitHint());
        ok = false;
        continue;
      }
      out->canary_wait = std::chrono::seconds(v);
    } else if (f.key == "pause_between") {
      ok = Seconds(f.value, name, 0, kMaxTimeoutSeconds, &v) && ok;
      out->pause_between = std::chrono::seconds(v);
    } else if (f.key == "max_fail_percentage") {
      ok = Ranged(f.value, name, 0, 100, "", &v) && ok;
      out->max_fail_percentage = static_cast<int>(v);
    } else if (f.key == "max_failures") {
      ok = Ranged(f.value, name, 0, internal::kMaxRolloutNodes, "", &v) && ok;
      out->max_failures = static_cast<int>(v);
    } else if (f.key == "on_breach") {
      auto s = r_.String(f.value, name);
      auto a = s ? ParseBreachAction(*s) : std::nullopt;
      if (s && !a) {
        r_.Error(f.value, "'rollout.on_breach' must be pause or abort, got " + Quote(*s));
      }
      ok = ok && a.has_value();
      if (a) out->on_breach = *a;
    }
  }
  if (!ok) return false;
  for (const auto& p : internal::RolloutProblems(*out, have_batch, have_wait)) {
    r_.Error(p.field.empty() ? n : at[p.field], p.message);
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
  if (!ok) return false;
  if (auto p = internal::MetadataProblem(*out, r_.limits()); !p.empty()) {
    r_.Error(n, p);
    return false;
  }
  return true;
}

bool TaskParser::Field(const internal::Field& f, TaskSpec* spec,
                       std::optional<RetryPolicySource>* written) {
  const YAML::Node& v = f.value;
  if (f.key == "task_id") {
    auto s = r_.String(v, "task_id");
    if (!s) return false;
    if (auto p = internal::TaskIdFieldProblem(*s); !p.empty()) {
      r_.Error(v, p);
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
  if (f.key == "retry_policy") {
    written->emplace();
    return Retry(v, &**written, &spec->retry_policy);
  }
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
  if (f.key == "rollout") {
    RolloutSpec r;
    bool ok = Rollout(v, &r);
    if (ok) spec->rollout = std::move(r);
    return ok;
  }
  if (f.key == "depends_on") {
    auto list = r_.StringList(v, "depends_on");
    if (!list) return false;
    bool ok = true;
    for (auto& [id, node] : *list) {
      if (auto p = internal::DependencyProblem(id, spec->depends_on); !p.empty()) {
        r_.Error(node, p);
        ok = false;
        continue;
      }
      spec->depends_on.push_back(id);
    }
    return ok;
  }
  if (f.key == "callback_url") {
    auto s = r_.String(v, "callback_url");
    if (!s) return false;
    if (auto p = internal::CallbackUrlProblem(*s); !p.empty()) {
      r_.Error(v, p);
      return false;
    }
    spec->callback_url = *s;
    return true;
  }
  if (f.key == "metadata") return Metadata(v, &spec->metadata);
  if (f.key == "params") {
    if (!v.IsMap()) {
      r_.Error(v, internal::NotMappingProblem("params"));
      return false;
    }
    auto j = r_.Json(v, "params");
    if (j) spec->params = std::move(*j);
    return j.has_value();
  }
  if (f.key == "priority") {
    auto s = r_.String(v, "priority");
    if (!s) return false;
    auto p = internal::ParsePriority(*s);
    if (!p) {
      r_.Error(v, internal::PriorityProblem(*s));
      return false;
    }
    spec->priority = *p;
    return true;
  }
  return false;  // Fields() only hands out known keys
}

// The value of `key` in mapping `map`, or `map` itself when absent (so a
// diagnostic still has a position).
YAML::Node FieldValue(const YAML::Node& map, std::string_view key) {
  for (const auto& kv : map) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  return map;
}

std::optional<TaskSpec> TaskParser::Parse(const YAML::Node& n,
                                          std::optional<RetryPolicySource>* written) {
  if (!n.IsMap()) {
    r_.Error(n, "a task must be a mapping of fields (task_id, intent, target_selector, ...)");
    return std::nullopt;
  }
  TaskSpec spec;
  bool ok = true;
  std::set<std::string> present;
  for (auto& f : r_.Fields(n, "task", kTaskFields)) {
    present.insert(f.key);
    ok = Field(f, &spec, written) && ok;
  }
  if (!present.count("retry_policy")) spec.retry_policy = DefaultRetryPolicy(presets_);
  for (std::string_view req : {"intent", "target_selector", "timeout"}) {
    if (!present.count(std::string(req))) {
      r_.Error(n, internal::MissingFieldProblem(req));
      ok = false;
    }
  }
  if (!present.count("task_id")) spec.task_id_generated = true;
  if (ok) {
    if (auto p = internal::FollowRolloutProblem(spec); !p.empty()) {
      r_.Error(FieldValue(n, "rollout"), p);
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return spec;
}

// Across the tasks of one file: duplicate ids, unknown deps, cycles.
void CheckGraph(YamlReader& r, const std::vector<std::pair<TaskSpec, YAML::Node>>& tasks,
                const ExternalTaskLookup& external) {
  std::vector<const TaskSpec*> specs;
  for (const auto& t : tasks) specs.push_back(&t.first);
  auto task_id_at = [&](size_t i) { return FieldValue(tasks[i].second, "task_id"); };
  auto where = [&](size_t i) { return "line " + std::to_string(task_id_at(i).Mark().line + 1); };
  for (const auto& p : internal::CheckTaskGraph(specs, external, where)) {
    if (p.dependency.empty()) {
      r.Error(task_id_at(p.task), p.message);
      continue;
    }
    // Point at the entry itself.
    const YAML::Node& node = tasks[p.task].second;
    YAML::Mark at = node.Mark();
    for (const auto& e : FieldValue(node, "depends_on")) {
      if (e.IsScalar() && e.Scalar() == p.dependency) at = e.Mark();
    }
    r.Error(at, p.message);
  }
}

}  // namespace

ParsedTasks ParseTaskFile(std::string_view content, std::string_view file_name,
                          const ParseLimits& limits, const ExternalTaskLookup& external,
                          const RetryPresets* presets) {
  ParsedTasks result;
  YamlReader r(file_name, limits, &result.errors);
  if (auto p = internal::TooLargeProblem("file", content.size(), limits); !p.empty()) {
    r.Error(YAML::Mark(), p);
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
      if (auto p = internal::TooManyTasksProblem("'tasks'", list.size(), limits); !p.empty()) {
        r.Error(list, p);
        return result;
      }
      for (const auto& t : list) task_nodes.push_back(t);
    } else {
      task_nodes.push_back(root);
    }
    TaskParser parser(r, presets ? *presets : BuiltinRetryPresets());
    std::vector<std::pair<TaskSpec, YAML::Node>> parsed;
    std::vector<std::optional<RetryPolicySource>> written;
    for (const auto& n : task_nodes) {
      std::optional<RetryPolicySource> retry;
      if (auto spec = parser.Parse(n, &retry)) {
        parsed.emplace_back(std::move(*spec), n);
        written.push_back(std::move(retry));
      }
    }
    CheckGraph(r, parsed, external);
    if (result.errors.empty()) {
      for (auto& p : parsed) {
        YAML::Mark at = FieldValue(p.second, "intent").Mark();
        result.intent_at.push_back({at.line + 1, at.column + 1});
        result.tasks.push_back(std::move(p.first));
      }
      result.retry_written = std::move(written);
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
