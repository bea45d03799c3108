// TaskSpec's names and its canonical JSON form. Parsing YAML is in
// task_spec_parse.cc.
#include "core/task_spec.h"

namespace apollo {

std::string_view PriorityName(Priority p) {
  switch (p) {
    case Priority::kHigh: return "high";
    case Priority::kNormal: return "normal";
    case Priority::kLow: return "low";
  }
  return "normal";
}

std::string_view SelectorTypeName(SelectorType t) {
  switch (t) {
    case SelectorType::kLabel: return "label";
    case SelectorType::kGroup: return "group";
    case SelectorType::kNodes: return "nodes";
  }
  return "nodes";
}

std::string Diagnostic::ToString() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

const RetryPresets& BuiltinRetryPresets() {
  static const RetryPresets presets = {
      {"fast", RetryPolicy::Fast()}, {"slow", RetryPolicy::Slow()}, {"none", *RetryPolicy::Preset("none")}};
  return presets;
}

RetryPolicy DefaultRetryPolicy(const RetryPresets& presets) {
  std::vector<RetryTier> tiers;
  for (const char* name : {"fast", "slow"}) {
    auto it = presets.find(name);
    const RetryPolicy& p = it != presets.end() ? it->second : BuiltinRetryPresets().at(name);
    if (p.tiers.empty()) {
      tiers.push_back(p.AsTier(name));
    } else {
      tiers.insert(tiers.end(), p.tiers.begin(), p.tiers.end());
    }
  }
  return RetryPolicy::Tiered(std::move(tiers));
}

namespace {

nlohmann::json RetryToJson(const RetryPolicy& r) {
  using nlohmann::json;
  if (r.tiers.empty()) {
    return json{{"max_retries", r.max_retries},
                {"initial_interval", r.initial_interval.count()},
                {"max_interval", r.max_interval.count()},
                {"backoff", BackoffName(r.backoff)},
                {"jitter", r.jitter}};
  }
  json tiers = json::array();
  for (const RetryTier& t : r.tiers) {
    tiers.push_back({{"name", t.name},
                     {"max_retries", t.max_retries},
                     {"initial_interval", t.initial_interval.count()},
                     {"max_interval", t.max_interval.count()},
                     {"backoff", BackoffName(t.backoff)},
                     {"jitter", t.jitter}});
  }
  return json{{"max_retries", r.max_retries}, {"tiers", tiers}};
}

}  // namespace

nlohmann::json SpecToJson(const TaskSpec& s) {
  using nlohmann::json;
  json sel = {{"type", SelectorTypeName(s.target_selector.type)}};
  switch (s.target_selector.type) {
    case SelectorType::kLabel:
      sel["key"] = s.target_selector.key;
      sel["value"] = s.target_selector.value;
      break;
    case SelectorType::kGroup: sel["group"] = s.target_selector.group; break;
    case SelectorType::kNodes: sel["nodes"] = s.target_selector.nodes; break;
  }
  sel["allow_empty"] = s.target_selector.allow_empty;
  if (s.target_selector.follow) sel["follow"] = true;
  // nlohmann::json objects are std::map-backed: keys come out sorted, which
  // is what makes the dump canonical. Fields added later appear only when
  // set, so a spec stored before them still compares equal.
  json j{{"task_id", s.task_id},
         {"intent", s.intent},
         {"target_selector", sel},
         {"timeout", s.timeout.count()},
         {"retry_policy", RetryToJson(s.retry_policy)},
         {"depends_on", s.depends_on},
         {"callback_url", s.callback_url},
         {"metadata", s.metadata},
         {"params", s.params},
         {"priority", PriorityName(s.priority)}};
  if (s.start_timeout) j["start_timeout"] = s.start_timeout->count();
  if (s.on_failure) {
    j["on_failure"] = {{"intent", s.on_failure->intent},
                       {"params", s.on_failure->params},
                       {"timeout", s.on_failure->timeout.count()}};
  }
  if (s.rollout) {
    const RolloutSpec& r = *s.rollout;
    json ro{{"batch_size", r.batch_size},
            {"batch_percent", r.batch_percent},
            {"canary", r.canary},
            {"canary_approve", r.canary_approve},
            {"canary_wait", r.canary_wait.count()},
            {"pause_between", r.pause_between.count()},
            {"on_breach", BreachActionName(r.on_breach)}};
    if (r.max_fail_percentage) ro["max_fail_percentage"] = *r.max_fail_percentage;
    if (r.max_failures) ro["max_failures"] = *r.max_failures;
    j["rollout"] = std::move(ro);
  }
  if (!s.compensates.empty()) j["compensates"] = s.compensates;
  return j;
}

std::string CanonicalSpec(const TaskSpec& spec) { return SpecToJson(spec).dump(); }

namespace {

Result<TaskSpec> SpecFromJsonUnchecked(const nlohmann::json& j) {
  TaskSpec s;
  s.task_id = j.at("task_id").get<std::string>();
  s.intent = j.at("intent").get<std::string>();
  const auto& sel = j.at("target_selector");
  const std::string type = sel.at("type").get<std::string>();
  if (type == "label") {
    s.target_selector.type = SelectorType::kLabel;
    s.target_selector.key = sel.at("key").get<std::string>();
    s.target_selector.value = sel.at("value").get<std::string>();
  } else if (type == "group") {
    s.target_selector.type = SelectorType::kGroup;
    s.target_selector.group = sel.at("group").get<std::string>();
  } else if (type == "nodes") {
    s.target_selector.type = SelectorType::kNodes;
    s.target_selector.nodes = sel.at("nodes").get<std::vector<std::string>>();
  } else {
    return Status::InvalidArgument("spec JSON: unknown target_selector type '" + type + "'");
  }
  s.target_selector.allow_empty = sel.value("allow_empty", false);
  s.target_selector.follow = sel.value("follow", false);
  s.timeout = std::chrono::seconds(j.at("timeout").get<int64_t>());
  const auto& r = j.at("retry_policy");
  if (r.contains("tiers")) {
    std::vector<RetryTier> tiers;
    for (const auto& t : r.at("tiers")) {
      auto backoff = ParseBackoff(t.at("backoff").get<std::string>());
      if (!backoff) return Status::InvalidArgument("spec JSON: unknown backoff");
      tiers.push_back(RetryTier{t.value("name", std::string()), t.at("max_retries").get<int>(),
                                std::chrono::seconds(t.at("initial_interval").get<int64_t>()),
                                std::chrono::seconds(t.at("max_interval").get<int64_t>()),
                                *backoff, t.value("jitter", false)});
    }
    s.retry_policy = RetryPolicy::Tiered(std::move(tiers));
  } else {
    s.retry_policy.max_retries = r.at("max_retries").get<int>();
    s.retry_policy.initial_interval = std::chrono::seconds(r.at("initial_interval").get<int64_t>());
    s.retry_policy.max_interval = std::chrono::seconds(r.at("max_interval").get<int64_t>());
    auto backoff = ParseBackoff(r.at("backoff").get<std::string>());
    if (!backoff) return Status::InvalidArgument("spec JSON: unknown backoff");
    s.retry_policy.backoff = *backoff;
    s.retry_policy.jitter = r.value("jitter", false);
  }
  s.depends_on = j.value("depends_on", std::vector<std::string>{});
  s.callback_url = j.value("callback_url", std::string());
  s.metadata = j.value("metadata", std::map<std::string, std::string>{});
  s.params = j.value("params", nlohmann::json::object());
  const std::string prio = j.value("priority", std::string("normal"));
  if (prio == "high") {
    s.priority = Priority::kHigh;
  } else if (prio == "low") {
    s.priority = Priority::kLow;
  } else if (prio == "normal") {
    s.priority = Priority::kNormal;
  } else {
    return Status::InvalidArgument("spec JSON: unknown priority '" + prio + "'");
  }
  if (j.contains("start_timeout")) {
    s.start_timeout = std::chrono::seconds(j.at("start_timeout").get<int64_t>());
  }
  if (j.contains("on_failure")) {
    const auto& f = j.at("on_failure");
    s.on_failure = CompensationSpec{f.at("intent").get<std::string>(),
                                    f.value("params", nlohmann::json::object()),
                                    std::chrono::seconds(f.value("timeout", int64_t{0}))};
  }
  if (j.contains("rollout")) {
    const auto& ro = j.at("rollout");
    RolloutSpec r;
    r.batch_size = ro.value("batch_size", 0);
    r.batch_percent = ro.value("batch_percent", 0);
    r.canary = ro.value("canary", 0);
    r.canary_approve = ro.value("canary_approve", false);
    r.canary_wait = std::chrono::seconds(ro.value("canary_wait", int64_t{0}));
    r.pause_between = std::chrono::seconds(ro.value("pause_between", int64_t{0}));
    if (ro.contains("max_fail_percentage")) {
      r.max_fail_percentage = ro.at("max_fail_percentage").get<int>();
    }
    if (ro.contains("max_failures")) r.max_failures = ro.at("max_failures").get<int>();
    auto a = ParseBreachAction(ro.value("on_breach", std::string("pause")));
    if (!a) return Status::InvalidArgument("spec JSON: unknown rollout.on_breach");
    r.on_breach = *a;
    s.rollout = r;
  }
  s.compensates = j.value("compensates", std::string());
  return s;
}

}  // namespace

Result<TaskSpec> SpecFromJson(const nlohmann::json& j) {
  try {
    return SpecFromJsonUnchecked(j);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("spec JSON: ") + e.what());
  }
}

}  // namespace apollo
