// The task rules, shared by the YAML and the typed path (task_spec_rules.h).
#include "core/task_spec_rules.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/dag.h"
#include "core/task_id.h"
#include "core/yaml_reader.h"

namespace apollo::internal {

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

std::string RangeProblem(std::string_view name, int64_t v, int64_t min, int64_t max,
                         std::string_view unit) {
  if (v >= min && v <= max) return {};
  return "'" + std::string(name) + "' must be between " + std::to_string(min) + " and " +
         std::to_string(max) + std::string(unit) + ", got " + std::to_string(v);
}

std::string SecondsProblem(std::string_view name, int64_t v, int64_t min, int64_t max) {
  return RangeProblem(name, v, min, max, " seconds");
}

std::string MissingFieldProblem(std::string_view field) {
  return "missing required field '" + std::string(field) + "'";
}

std::string TaskIdFieldProblem(std::string_view id) {
  if (auto p = TaskIdProblem(id); !p.empty()) return "invalid task_id " + Quote(id) + ": " + p;
  return {};
}

std::string DependencyProblem(std::string_view id, const std::vector<std::string>& before) {
  if (auto p = TaskIdProblem(id); !p.empty()) {
    return "'depends_on' entry " + Quote(id) + " is not a valid task_id: " + p;
  }
  if (std::find(before.begin(), before.end(), id) != before.end()) {
    return "'depends_on' lists " + Quote(id) + " twice";
  }
  return {};
}

std::string CallbackUrlProblem(std::string_view url) {
  bool http = url.starts_with("http://") && url.size() > 7;
  bool https = url.starts_with("https://") && url.size() > 8;
  if (http || https) return {};
  return "'callback_url' must be an http:// or https:// URL, got " + Quote(url);
}

std::optional<Priority> ParsePriority(std::string_view name) {
  if (name == "high") return Priority::kHigh;
  if (name == "normal") return Priority::kNormal;
  if (name == "low") return Priority::kLow;
  return std::nullopt;
}

std::string PriorityProblem(std::string_view got) {
  return "'priority' must be high, normal or low, got " + Quote(got);
}

std::string NotMappingProblem(std::string_view name) {
  return "'" + std::string(name) + "' must be a mapping";
}

std::string PayloadProblem(std::string_view name, size_t bytes, const ParseLimits& limits) {
  if (bytes <= limits.max_payload_bytes) return {};
  return "'" + std::string(name) + "' is " + std::to_string(bytes) +
         " bytes once serialized; the limit is " + std::to_string(limits.max_payload_bytes);
}

std::string DepthProblem(const ParseLimits& limits) {
  return "nesting deeper than " + std::to_string(limits.max_depth) + " levels";
}

std::string MetadataProblem(const std::map<std::string, std::string>& metadata,
                            const ParseLimits& limits) {
  if (metadata.empty() && limits.max_payload_bytes >= 2) return {};  // "{}"
  size_t bytes = nlohmann::json(metadata).dump().size();
  if (bytes <= limits.max_payload_bytes) return {};
  return "'metadata' is " + std::to_string(bytes) + " bytes once serialized; the limit is " +
         std::to_string(limits.max_payload_bytes);
}

std::string TooLargeProblem(std::string_view what, size_t bytes, const ParseLimits& limits) {
  if (bytes <= limits.max_file_bytes) return {};
  return std::string(what) + " is " + std::to_string(bytes) + " bytes; the limit is " +
         std::to_string(limits.max_file_bytes);
}

std::string TooManyTasksProblem(std::string_view what, size_t tasks, const ParseLimits& limits) {
  if (tasks <= limits.max_tasks) return {};
  return std::string(what) + " has " + std::to_string(tasks) + " tasks; the limit is " +
         std::to_string(limits.max_tasks);
}

std::string SelectorTypeMissingProblem() {
  return "'target_selector' is missing 'type' (label, group or nodes)";
}

std::optional<SelectorType> ParseSelectorType(std::string_view name) {
  if (name == "label") return SelectorType::kLabel;
  if (name == "group") return SelectorType::kGroup;
  if (name == "nodes") return SelectorType::kNodes;
  return std::nullopt;
}

std::string SelectorTypeProblem(std::string_view got) {
  return "'target_selector.type' must be label, group or nodes, got " + Quote(got);
}

std::vector<FieldProblem> SelectorFieldProblems(
    SelectorType type, const std::function<bool(std::string_view)>& given) {
  std::vector<std::string_view> needs;
  switch (type) {
    case SelectorType::kLabel:
      needs = {"key", "value"};
      break;
    case SelectorType::kGroup:
      needs = {"group"};
      break;
    case SelectorType::kNodes:
      needs = {"nodes"};
      break;
  }
  const std::string type_name(SelectorTypeName(type));
  std::vector<FieldProblem> out;
  for (std::string_view k : {"key", "value", "group", "nodes"}) {
    bool needed = std::find(needs.begin(), needs.end(), k) != needs.end();
    if (needed && !given(k)) {
      out.push_back(
          {"", "'target_selector' of type " + type_name + " needs '" + std::string(k) + "'"});
    } else if (!needed && given(k)) {
      out.push_back({std::string(k), "'target_selector." + std::string(k) +
                                         "' does not apply to type " + type_name});
    }
  }
  return out;
}

std::string EmptyNodesProblem() { return "'target_selector.nodes' must name at least one node"; }

std::string NodeEntryProblem(std::string_view id,
                             const std::set<std::string, std::less<>>& before) {
  if (auto p = NameProblem("target_selector.nodes", id); !p.empty()) return p;
  if (before.count(id)) {
    return "node " + Quote(id) + " is listed twice in 'target_selector.nodes'";
  }
  return {};
}

std::string StandsAloneProblem(std::string_view field, bool tier) {
  return "'" + std::string(field) +
         "' stands alone: " + (tier ? "a preset sets every field" : "it sets every field");
}

std::string EmptyTiersProblem() { return "'retry_policy.tiers' must be a non-empty list of tiers"; }

std::string BackoffProblem(std::string_view name, std::string_view got) {
  return "'" + std::string(name) + "' must be exponential or fixed, got " + Quote(got);
}

std::string IntervalOrderProblem(std::string_view prefix, const RetryTier& t) {
  if (t.initial_interval <= t.max_interval) return {};
  const std::string p(prefix);
  return "'" + p + ".initial_interval' (" + std::to_string(t.initial_interval.count()) +
         ") is greater than '" + p + ".max_interval' (" + std::to_string(t.max_interval.count()) +
         ")";
}

std::string PresetTiers(const RetryPresets& presets, const std::string& name,
                        std::vector<RetryTier>* out) {
  auto it = presets.find(name);
  if (it == presets.end()) {
    std::string known;
    for (const auto& [k, v] : presets) known += (known.empty() ? "" : ", ") + k;
    return "unknown retry preset " + Quote(name) + " (known: " + known + ")";
  }
  if (it->second.tiers.empty()) {
    out->push_back(it->second.AsTier(name));
  } else {
    out->insert(out->end(), it->second.tiers.begin(), it->second.tiers.end());
  }
  return {};
}

std::vector<std::pair<int, std::string>> ResolveRetryPolicy(const RetryPolicySource& written,
                                                            const RetryPresets& presets,
                                                            RetryPolicy* out) {
  std::vector<std::pair<int, std::string>> problems;
  std::vector<RetryTier> tiers;
  if (written.preset) {
    if (auto p = PresetTiers(presets, *written.preset, &tiers); !p.empty()) {
      problems.emplace_back(-1, std::move(p));
    }
  } else if (!written.tiers.empty()) {
    for (size_t i = 0; i < written.tiers.size(); ++i) {
      const RetryTierSource& t = written.tiers[i];
      if (!t.preset) {
        tiers.push_back(t.tier);
      } else if (auto p = PresetTiers(presets, *t.preset, &tiers); !p.empty()) {
        problems.emplace_back(static_cast<int>(i), std::move(p));
      }
    }
  } else {
    const RetryTier& f = written.fields;
    *out = RetryPolicy{f.max_retries, f.initial_interval, f.max_interval, f.backoff, f.jitter, {}};
    return problems;
  }
  if (problems.empty()) *out = RetryPolicy::Tiered(std::move(tiers));
  return problems;
}

std::string CompensationIntentMissingProblem() {
  return "'on_failure' needs an 'intent' (the compensation to run)";
}

std::string FollowProblem(SelectorType type) {
  if (type == SelectorType::kNodes) {
    return "'target_selector.follow' applies to label and group selectors (a nodes list names "
           "its nodes already)";
  }
  return {};
}

std::string FollowRolloutProblem(const TaskSpec& spec) {
  if (spec.rollout && spec.target_selector.follow) {
    return "'rollout' and 'target_selector.follow' cannot be combined: a node joining later "
           "would skip the batches (roll out to the nodes matched now, without follow)";
  }
  return {};
}

std::string BatchSizeProblem(std::string_view got, int* count, int* percent) {
  std::string_view digits = got;
  const bool pct = !digits.empty() && digits.back() == '%';
  if (pct) digits.remove_suffix(1);
  int64_t v = 0;
  bool ok = !digits.empty() && digits.size() <= 7;
  for (char c : digits) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) v = v * 10 + (c - '0');
  }
  if (!ok) {
    return "'rollout.batch_size' must be a count of nodes (2) or a percentage of them (25%), "
           "got " +
           Quote(got);
  }
  if (pct) {
    if (v < 1 || v > 100) {
      return "'rollout.batch_size' percentage must be 1%..100%, got " + std::string(got);
    }
    *percent = static_cast<int>(v);
    return {};
  }
  if (auto p = RangeProblem("rollout.batch_size", v, 1, kMaxRolloutNodes, ""); !p.empty()) {
    return p;
  }
  *count = static_cast<int>(v);
  return {};
}

std::vector<FieldProblem> RolloutProblems(const RolloutSpec& r, bool have_batch_size,
                                          bool have_canary_wait) {
  std::vector<FieldProblem> out;
  if (!have_batch_size) {
    out.push_back({"",
                   "'rollout' needs 'batch_size' (a count of nodes, or a percentage such as "
                   "25%)"});
  }
  if (r.max_failures && r.max_fail_percentage) {
    out.push_back({"max_failures",
                   "'rollout.max_failures' and 'rollout.max_fail_percentage' "
                   "cannot both be given: choose one failure budget"});
  }
  if (have_canary_wait && r.canary == 0) {
    out.push_back({"canary_wait",
                   "'rollout.canary_wait' needs 'rollout.canary' (the nodes "
                   "to change first)"});
  }
  return out;
}

std::string CanaryWaitHint() {
  return "'rollout.canary_wait' must be 'approve' (wait for `task approve`) or a duration "
         "(30, 30s, 10m)";
}

std::vector<GraphProblem> CheckTaskGraph(const std::vector<const TaskSpec*>& tasks,
                                         const ExternalTaskLookup& external,
                                         const std::function<std::string(size_t)>& where) {
  std::vector<GraphProblem> out;
  std::map<std::string, size_t, std::less<>> first;  // task id -> its first task
  std::vector<DagNode> dag;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskSpec& spec = *tasks[i];
    if (spec.task_id_generated) {
      // Nothing can depend on an id that does not exist yet.
      dag.push_back({"", spec.depends_on});
      continue;
    }
    auto [it, fresh] = first.emplace(spec.task_id, i);
    if (!fresh) {
      out.push_back({i, "",
                     "duplicate task_id " + Quote(spec.task_id) + " (first defined at " +
                         where(it->second) + ")"});
    }
    dag.push_back({spec.task_id, spec.depends_on});
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    for (const auto& dep : tasks[i]->depends_on) {
      if (first.count(dep) || (external && external(dep))) continue;
      out.push_back({i, dep,
                     "'depends_on' names unknown task " + Quote(dep) + " (not in this file" +
                         (external ? " nor in the store)" : ")")});
    }
  }
  if (auto cycle = FindCycle(dag)) {
    out.push_back({first.at(cycle->front()), "", "dependency cycle: " + FormatCycle(*cycle)});
  }
  return out;
}

}  // namespace apollo::internal
