// Typed task specs: TaskSpec -> apollo.v1.TaskSpec, and back with the task
// file's checks (task_spec_rules.h).
#include "core/task_spec_proto.h"

#include <algorithm>
#include <set>
#include <type_traits>

#include "core/task_id.h"
#include "core/task_spec_rules.h"
#include "core/yaml_reader.h"

namespace apollo {
namespace {

using internal::kMaxIntervalSeconds;
using internal::kMaxRetries;
using internal::kMaxTimeoutSeconds;

// ---------------------------------------------------------- TaskSpec -> proto

std::string ParamsText(const nlohmann::json& params) {
  return params.is_object() && params.empty() ? std::string() : params.dump();
}

template <class T>  // v1::RetryTier, or v1::RetryPolicy's one-tier fields
void TierToProto(const RetryTier& t, T* out) {
  if constexpr (std::is_same_v<T, v1::RetryTier>) {
    if (!t.name.empty()) out->set_name(t.name);
  }
  out->set_max_retries(t.max_retries);
  out->set_initial_interval_s(t.initial_interval.count());
  out->set_max_interval_s(t.max_interval.count());
  out->set_backoff(t.backoff == Backoff::kFixed ? v1::BACKOFF_FIXED : v1::BACKOFF_EXPONENTIAL);
  out->set_jitter(t.jitter);
}

void RetryToProto(const RetryPolicy& r, v1::RetryPolicy* out) {
  if (r.tiers.empty()) return TierToProto(r.AsTier(""), out);
  for (const RetryTier& t : r.tiers) TierToProto(t, out->add_tiers());
}

void RetrySourceToProto(const RetryPolicySource& w, v1::RetryPolicy* out) {
  if (w.preset) return out->set_preset(*w.preset);
  if (w.tiers.empty()) return TierToProto(w.fields, out);
  for (const RetryTierSource& t : w.tiers) {
    v1::RetryTier* tier = out->add_tiers();
    if (t.preset) {
      tier->set_preset(*t.preset);
    } else {
      TierToProto(t.tier, tier);
    }
  }
}

v1::Priority PriorityToProto(Priority p) {
  switch (p) {
    case Priority::kHigh:
      return v1::PRIORITY_HIGH;
    case Priority::kLow:
      return v1::PRIORITY_LOW;
    case Priority::kNormal:
      break;
  }
  return v1::PRIORITY_NORMAL;
}

// Every field but the retry policy.
void FieldsToProto(const TaskSpec& s, v1::TaskSpec* out) {
  if (!s.task_id_generated) out->set_task_id(s.task_id);
  out->set_intent(s.intent);
  v1::TargetSelector* sel = out->mutable_target_selector();
  switch (s.target_selector.type) {
    case SelectorType::kLabel:
      sel->set_type(v1::SELECTOR_TYPE_LABEL);
      sel->set_key(s.target_selector.key);
      sel->set_value(s.target_selector.value);
      break;
    case SelectorType::kGroup:
      sel->set_type(v1::SELECTOR_TYPE_GROUP);
      sel->set_group(s.target_selector.group);
      break;
    case SelectorType::kNodes:
      sel->set_type(v1::SELECTOR_TYPE_NODES);
      for (const auto& n : s.target_selector.nodes) sel->add_nodes(n);
      break;
  }
  sel->set_allow_empty(s.target_selector.allow_empty);
  sel->set_follow(s.target_selector.follow);
  out->set_timeout_s(s.timeout.count());
  for (const auto& d : s.depends_on) out->add_depends_on(d);
  out->set_callback_url(s.callback_url);
  out->mutable_metadata()->insert(s.metadata.begin(), s.metadata.end());
  out->set_params_json(ParamsText(s.params));
  out->set_priority(PriorityToProto(s.priority));
  if (s.start_timeout) out->set_start_timeout_s(s.start_timeout->count());
  if (s.on_failure) {
    v1::Compensation* c = out->mutable_on_failure();
    c->set_intent(s.on_failure->intent);
    c->set_params_json(ParamsText(s.on_failure->params));
    c->set_timeout_s(s.on_failure->timeout.count());
  }
  if (s.rollout) {
    const RolloutSpec& r = *s.rollout;
    v1::Rollout* ro = out->mutable_rollout();
    ro->set_batch_size(r.batch_size);
    ro->set_batch_percent(r.batch_percent);
    ro->set_canary(r.canary);
    ro->set_canary_approve(r.canary_approve);
    ro->set_canary_wait_s(r.canary_wait.count());
    ro->set_pause_between_s(r.pause_between.count());
    if (r.max_fail_percentage) ro->set_max_fail_percentage(*r.max_fail_percentage);
    if (r.max_failures) ro->set_max_failures(*r.max_failures);
    ro->set_on_breach(std::string(BreachActionName(r.on_breach)));
  }
}

// ---------------------------------------------------------- proto -> TaskSpec

// How deep `text` (JSON) nests arrays and objects, brackets in strings
// aside; checked before parsing, which would recurse that deep to dump it.
int JsonDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      in_string = escaped || c != '"';
      escaped = !escaped && c == '\\';
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// Checks the specs of one request into TaskSpecs, reporting each problem
// against the task it is about.
class SpecChecker {
 public:
  SpecChecker(std::string_view file, const ParseLimits& limits, const RetryPresets& presets,
              std::vector<Diagnostic>* out)
      : file_(file), limits_(limits), presets_(presets), out_(out) {}

  // Spec `index` of the request, or nullopt after reporting all its problems.
  std::optional<TaskSpec> Check(size_t index, const v1::TaskSpec& pb);
  // Reports `problem` (if any) about spec `index`, whose id is `task_id`.
  bool Report(size_t index, std::string_view task_id, std::string problem);

 private:
  bool Report(std::string problem) { return Report(index_, task_id_, std::move(problem)); }
  bool Selector(const v1::TargetSelector& pb, TargetSelector* out);
  bool Retry(const v1::RetryPolicy& pb, RetryPolicy* out);
  bool Tier(const v1::RetryTier& pb, const std::string& what, RetryTierSource* out);
  template <class T>
  bool TierFields(const T& pb, const std::string& prefix, RetryTier* out);
  bool Params(std::string_view name, const std::string& text, nlohmann::json* out);
  bool Compensation(const v1::Compensation& pb, CompensationSpec* out);
  bool Rollout(const v1::Rollout& pb, RolloutSpec* out);
  bool Fields(const v1::TaskSpec& pb, TaskSpec* spec);

  const std::string file_;
  const ParseLimits& limits_;
  const RetryPresets& presets_;
  std::vector<Diagnostic>* out_;
  size_t index_ = 0;     // the spec being checked
  std::string task_id_;  // its task_id
};

bool SpecChecker::Report(size_t index, std::string_view task_id, std::string problem) {
  if (problem.empty()) return true;
  std::string id = task_id.empty()                  ? std::string("no task_id")
                   : TaskIdProblem(task_id).empty() ? "id " + std::string(task_id)
                                                    : "id " + internal::Quote(task_id);
  out_->push_back(Diagnostic{file_, 0, 0,
                             "task " + std::to_string(index + 1) + " (" + id + "): " + problem,
                             static_cast<int>(index)});
  return false;
}

bool SpecChecker::Selector(const v1::TargetSelector& pb, TargetSelector* out) {
  switch (pb.type()) {
    case v1::SELECTOR_TYPE_UNSPECIFIED:
      return Report(internal::SelectorTypeMissingProblem());
    case v1::SELECTOR_TYPE_LABEL:
      out->type = SelectorType::kLabel;
      break;
    case v1::SELECTOR_TYPE_GROUP:
      out->type = SelectorType::kGroup;
      break;
    case v1::SELECTOR_TYPE_NODES:
      out->type = SelectorType::kNodes;
      break;
    default:
      return Report(internal::SelectorTypeProblem(std::to_string(pb.type())));
  }
  // An empty field is one not given.
  auto given = [&](std::string_view k) {
    return k == "key"     ? !pb.key().empty()
           : k == "value" ? !pb.value().empty()
           : k == "group" ? !pb.group().empty()
                          : pb.nodes_size() > 0;
  };
  bool ok = true;
  for (const auto& p : internal::SelectorFieldProblems(out->type, given)) ok = Report(p.message);
  if (!ok) return false;
  if (out->type == SelectorType::kLabel) {
    ok = Report(internal::NameProblem("target_selector.key", pb.key())) &
         Report(internal::NameProblem("target_selector.value", pb.value()));
    out->key = pb.key();
    out->value = pb.value();
  } else if (out->type == SelectorType::kGroup) {
    ok = Report(internal::NameProblem("target_selector.group", pb.group()));
    out->group = pb.group();
  } else {
    std::set<std::string, std::less<>> seen;
    for (const std::string& id : pb.nodes()) {
      if (!Report(internal::NodeEntryProblem(id, seen))) {
        ok = false;
        continue;
      }
      seen.insert(id);
      out->nodes.push_back(id);
    }
  }
  out->allow_empty = pb.allow_empty();
  out->follow = pb.follow();
  if (out->follow) ok &= Report(internal::FollowProblem(out->type));
  return ok;
}

template <class T>
bool SpecChecker::TierFields(const T& pb, const std::string& prefix, RetryTier* out) {
  bool ok = true;
  if constexpr (std::is_same_v<T, v1::RetryTier>) {
    if (!pb.name().empty()) ok = Report(internal::NameProblem(prefix + ".name", pb.name()));
    out->name = pb.name();
  }
  if (pb.has_max_retries()) {
    ok &= Report(
        internal::RangeProblem(prefix + ".max_retries", pb.max_retries(), 0, kMaxRetries, ""));
    out->max_retries = pb.max_retries();
  }
  bool have_initial = false, have_max = false;
  if (pb.has_initial_interval_s()) {
    have_initial = Report(internal::SecondsProblem(
        prefix + ".initial_interval", pb.initial_interval_s(), 0, kMaxIntervalSeconds));
    ok = ok && have_initial;
    out->initial_interval = std::chrono::seconds(pb.initial_interval_s());
  }
  if (pb.has_max_interval_s()) {
    have_max = Report(internal::SecondsProblem(prefix + ".max_interval", pb.max_interval_s(), 0,
                                               kMaxIntervalSeconds));
    ok = ok && have_max;
    out->max_interval = std::chrono::seconds(pb.max_interval_s());
  }
  if (pb.backoff() == v1::BACKOFF_EXPONENTIAL) {
    out->backoff = Backoff::kExponential;
  } else if (pb.backoff() == v1::BACKOFF_FIXED) {
    out->backoff = Backoff::kFixed;
  } else if (pb.backoff() != v1::BACKOFF_UNSPECIFIED) {
    ok = Report(internal::BackoffProblem(prefix + ".backoff", std::to_string(pb.backoff())));
  }
  if (pb.has_jitter()) out->jitter = pb.jitter();
  if (have_initial && have_max) ok &= Report(internal::IntervalOrderProblem(prefix, *out));
  return ok;
}

template <class T>
bool HasTierFields(const T& pb) {
  return pb.has_max_retries() || pb.has_initial_interval_s() || pb.has_max_interval_s() ||
         pb.backoff() != v1::BACKOFF_UNSPECIFIED || pb.has_jitter();
}

bool SpecChecker::Tier(const v1::RetryTier& pb, const std::string& what, RetryTierSource* out) {
  if (pb.preset().empty()) return TierFields(pb, what, &out->tier);
  if (HasTierFields(pb) || !pb.name().empty()) {
    return Report(internal::StandsAloneProblem(what + ".preset", /*tier=*/true));
  }
  out->preset = pb.preset();
  return true;
}

bool SpecChecker::Retry(const v1::RetryPolicy& pb, RetryPolicy* out) {
  const bool fields = HasTierFields(pb);
  if (!pb.preset().empty() && (pb.tiers_size() > 0 || fields)) {
    return Report(internal::StandsAloneProblem("retry_policy.preset", /*tier=*/false));
  }
  if (pb.tiers_size() > 0 && fields) {
    return Report(internal::StandsAloneProblem("retry_policy.tiers", /*tier=*/false));
  }
  RetryPolicySource written;
  bool ok = true;
  if (!pb.preset().empty()) {
    written.preset = pb.preset();
  } else if (pb.tiers_size() > 0) {
    for (int i = 0; i < pb.tiers_size(); ++i) {
      RetryTierSource tier;
      if (Tier(pb.tiers(i), "retry_policy.tiers[" + std::to_string(i) + "]", &tier)) {
        written.tiers.push_back(std::move(tier));
      } else {
        ok = false;
      }
    }
  } else {
    written.fields = RetryPolicy{}.AsTier("");
    if (!TierFields(pb, "retry_policy", &written.fields)) return false;
  }
  // Every unknown preset is reported, even beside a tier with other errors.
  for (auto& problem : internal::ResolveRetryPolicy(written, presets_, out)) {
    ok = Report(std::move(problem.second));
  }
  return ok;
}

bool SpecChecker::Params(std::string_view name, const std::string& text, nlohmann::json* out) {
  if (text.empty()) {
    *out = nlohmann::json::object();
    return true;
  }
  if (JsonDepth(text) > limits_.max_depth) return Report(internal::DepthProblem(limits_));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Report("'" + std::string(name) + "' is not valid JSON");
  if (!j.is_object()) return Report(internal::NotMappingProblem(name));
  if (!Report(internal::PayloadProblem(name, j.dump().size(), limits_))) return false;
  *out = std::move(j);
  return true;
}

bool SpecChecker::Compensation(const v1::Compensation& pb, CompensationSpec* out) {
  if (pb.intent().empty()) return Report(internal::CompensationIntentMissingProblem());
  bool ok = Report(internal::NameProblem("on_failure.intent", pb.intent()));
  out->intent = pb.intent();
  ok &= Params("on_failure.params", pb.params_json(), &out->params);
  if (pb.timeout_s() != 0) {
    ok &= Report(
        internal::SecondsProblem("on_failure.timeout", pb.timeout_s(), 1, kMaxTimeoutSeconds));
  }
  out->timeout = std::chrono::seconds(pb.timeout_s());
  return ok;
}

bool SpecChecker::Rollout(const v1::Rollout& pb, RolloutSpec* out) {
  bool ok = true;
  const bool have_batch = pb.batch_size() != 0 || pb.batch_percent() != 0;
  if (pb.batch_size() != 0 && pb.batch_percent() != 0) {
    ok = Report("'rollout.batch_size' and 'rollout.batch_percent' cannot both be given");
  } else if (pb.batch_percent() != 0) {
    ok = Report(internal::BatchSizeProblem(std::to_string(pb.batch_percent()) + "%",
                                           &out->batch_size, &out->batch_percent));
  } else if (pb.batch_size() != 0) {
    ok = Report(internal::BatchSizeProblem(std::to_string(pb.batch_size()), &out->batch_size,
                                           &out->batch_percent));
  }
  ok &= Report(
      internal::RangeProblem("rollout.canary", pb.canary(), 0, internal::kMaxRolloutNodes, ""));
  out->canary = pb.canary();
  out->canary_approve = pb.canary_approve();
  ok &= Report(
      internal::SecondsProblem("rollout.canary_wait", pb.canary_wait_s(), 0, kMaxTimeoutSeconds));
  out->canary_wait = std::chrono::seconds(pb.canary_wait_s());
  ok &= Report(internal::SecondsProblem("rollout.pause_between", pb.pause_between_s(), 0,
                                        kMaxTimeoutSeconds));
  out->pause_between = std::chrono::seconds(pb.pause_between_s());
  if (pb.has_max_fail_percentage()) {
    ok &= Report(internal::RangeProblem("rollout.max_fail_percentage", pb.max_fail_percentage(), 0,
                                        100, ""));
    out->max_fail_percentage = pb.max_fail_percentage();
  }
  if (pb.has_max_failures()) {
    ok &= Report(internal::RangeProblem("rollout.max_failures", pb.max_failures(), 0,
                                        internal::kMaxRolloutNodes, ""));
    out->max_failures = pb.max_failures();
  }
  if (!pb.on_breach().empty()) {
    auto a = ParseBreachAction(pb.on_breach());
    if (!a) {
      ok = Report("'rollout.on_breach' must be pause or abort, got " +
                  internal::Quote(pb.on_breach()));
    } else {
      out->on_breach = *a;
    }
  }
  const bool have_wait = pb.canary_approve() || pb.canary_wait_s() != 0;
  for (const auto& p : internal::RolloutProblems(*out, have_batch, have_wait)) {
    ok = Report(p.message);
  }
  return ok;
}

// Every field but task_id, in the order of the message.
bool SpecChecker::Fields(const v1::TaskSpec& pb, TaskSpec* spec) {
  bool ok = true;
  if (!pb.intent().empty()) ok = Report(internal::NameProblem("intent", pb.intent()));
  spec->intent = pb.intent();
  if (pb.has_target_selector()) ok &= Selector(pb.target_selector(), &spec->target_selector);
  if (pb.timeout_s() != 0) {
    ok &= Report(internal::SecondsProblem("timeout", pb.timeout_s(), 1, kMaxTimeoutSeconds));
  }
  spec->timeout = std::chrono::seconds(pb.timeout_s());
  if (pb.has_retry_policy()) {
    ok &= Retry(pb.retry_policy(), &spec->retry_policy);
  } else {
    spec->retry_policy = DefaultRetryPolicy(presets_);
  }
  for (const std::string& id : pb.depends_on()) {
    if (Report(internal::DependencyProblem(id, spec->depends_on))) {
      spec->depends_on.push_back(id);
    } else {
      ok = false;
    }
  }
  if (!pb.callback_url().empty()) ok &= Report(internal::CallbackUrlProblem(pb.callback_url()));
  spec->callback_url = pb.callback_url();
  for (const auto& kv : pb.metadata()) spec->metadata.emplace(kv.first, kv.second);
  ok &= Report(internal::MetadataProblem(spec->metadata, limits_));
  ok &= Params("params", pb.params_json(), &spec->params);
  switch (pb.priority()) {
    case v1::PRIORITY_HIGH:
      spec->priority = Priority::kHigh;
      break;
    case v1::PRIORITY_NORMAL:
      spec->priority = Priority::kNormal;
      break;
    case v1::PRIORITY_LOW:
      spec->priority = Priority::kLow;
      break;
    default:
      ok = Report(internal::PriorityProblem(std::to_string(pb.priority())));
  }
  if (pb.has_start_timeout_s()) {
    ok &= Report(
        internal::SecondsProblem("start_timeout", pb.start_timeout_s(), 0, kMaxTimeoutSeconds));
    spec->start_timeout = std::chrono::seconds(pb.start_timeout_s());
  }
  if (pb.has_on_failure()) {
    CompensationSpec c;
    if (Compensation(pb.on_failure(), &c)) {
      spec->on_failure = std::move(c);
    } else {
      ok = false;
    }
  }
  if (pb.has_rollout()) {
    RolloutSpec r;
    if (Rollout(pb.rollout(), &r)) {
      spec->rollout = r;
      ok &= Report(internal::FollowRolloutProblem(*spec));
    } else {
      ok = false;
    }
  }
  return ok;
}

std::optional<TaskSpec> SpecChecker::Check(size_t index, const v1::TaskSpec& pb) {
  index_ = index;
  task_id_ = pb.task_id();
  TaskSpec spec;
  bool ok = true;
  if (pb.task_id().empty()) {
    spec.task_id_generated = true;
  } else {
    ok = Report(internal::TaskIdFieldProblem(pb.task_id()));
    spec.task_id = pb.task_id();
  }
  ok &= Fields(pb, &spec);
  if (pb.intent().empty()) ok = Report(internal::MissingFieldProblem("intent"));
  if (!pb.has_target_selector()) ok = Report(internal::MissingFieldProblem("target_selector"));
  if (pb.timeout_s() == 0) ok = Report(internal::MissingFieldProblem("timeout"));
  if (!ok) return std::nullopt;
  return spec;
}

}  // namespace

void TaskSpecToProto(const TaskSpec& spec, v1::TaskSpec* out) {
  FieldsToProto(spec, out);
  RetryToProto(spec.retry_policy, out->mutable_retry_policy());
}

void TaskSpecToProto(const TaskSpec& spec, const std::optional<RetryPolicySource>& retry_written,
                     v1::TaskSpec* out) {
  FieldsToProto(spec, out);
  if (retry_written) RetrySourceToProto(*retry_written, out->mutable_retry_policy());
}

ParsedTasks TaskSpecsFromProto(const google::protobuf::RepeatedPtrField<v1::TaskSpec>& specs,
                               std::string_view file_name, const ParseLimits& limits,
                               const ExternalTaskLookup& external, const RetryPresets* presets) {
  ParsedTasks result;
  size_t bytes = 0;
  for (const auto& s : specs) bytes += s.ByteSizeLong();
  std::string p = internal::TooLargeProblem("'specs' (serialized)", bytes, limits);
  if (p.empty()) p = internal::TooManyTasksProblem("'specs'", specs.size(), limits);
  if (!p.empty()) {
    result.errors.push_back(Diagnostic{std::string(file_name), 0, 0, std::move(p), -1});
    return result;
  }
  SpecChecker checker(file_name, limits, presets ? *presets : BuiltinRetryPresets(),
                      &result.errors);
  std::vector<TaskSpec> tasks;
  std::vector<size_t> index;  // tasks[k] is specs[index[k]]
  for (int i = 0; i < specs.size(); ++i) {
    if (auto spec = checker.Check(i, specs[i])) {
      tasks.push_back(std::move(*spec));
      index.push_back(i);
    }
  }
  std::vector<const TaskSpec*> checked;
  for (const auto& t : tasks) checked.push_back(&t);
  auto where = [&](size_t k) { return "task " + std::to_string(index[k] + 1); };
  for (const auto& g : internal::CheckTaskGraph(checked, external, where)) {
    checker.Report(index[g.task], specs[index[g.task]].task_id(), g.message);
  }
  if (result.errors.empty()) result.tasks = std::move(tasks);
  return result;
}

}  // namespace apollo
