#pragma once

// Internal to core: the rules a task must follow, once, for both ways a task
// arrives — a task file (task_spec_parse.cc, which adds line:column) and a
// typed apollo.v1.TaskSpec (task_spec_proto.cc, which adds "task N (id X)").
// Each check returns the diagnostic's message, or "" when the value is
// allowed; the caller says where.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/task_spec.h"

namespace apollo::internal {

inline constexpr int64_t kMaxTimeoutSeconds = 30LL * 24 * 3600;  // 30 days
inline constexpr int64_t kMaxIntervalSeconds = 24 * 3600;        // 1 day
inline constexpr int64_t kMaxRetries = 100;
inline constexpr size_t kMaxNameLength = 128;

// A name (intent, label key/value, group, node id, tier name): the task_id
// alphabet plus '/', 1..kMaxNameLength characters.
std::string NameProblem(std::string_view what, std::string_view v);
// An integer in [min, max]; `unit` (" seconds" or "") follows it.
std::string RangeProblem(std::string_view name, int64_t v, int64_t min, int64_t max,
                         std::string_view unit);
std::string SecondsProblem(std::string_view name, int64_t v, int64_t min, int64_t max);
std::string MissingFieldProblem(std::string_view field);
std::string TaskIdFieldProblem(std::string_view id);
// One `depends_on` entry, after the entries before it.
std::string DependencyProblem(std::string_view id, const std::vector<std::string>& before);
std::string CallbackUrlProblem(std::string_view url);

std::optional<Priority> ParsePriority(std::string_view name);
std::string PriorityProblem(std::string_view got);

// `params` and `on_failure.params`: a mapping, at most max_payload_bytes
// once serialized, nested at most max_depth deep.
std::string NotMappingProblem(std::string_view name);
std::string PayloadProblem(std::string_view name, size_t bytes, const ParseLimits& limits);
std::string DepthProblem(const ParseLimits& limits);
std::string MetadataProblem(const std::map<std::string, std::string>& metadata,
                            const ParseLimits& limits);

// The request as a whole: "<what> is N bytes; the limit is M" and
// "<what> has N tasks; the limit is M".
std::string TooLargeProblem(std::string_view what, size_t bytes, const ParseLimits& limits);
std::string TooManyTasksProblem(std::string_view what, size_t tasks, const ParseLimits& limits);

// target_selector.
std::string SelectorTypeMissingProblem();
std::optional<SelectorType> ParseSelectorType(std::string_view name);
std::string SelectorTypeProblem(std::string_view got);
// Which of key/value/group/nodes a selector of `type` needs and may have:
// `given` says which were given. Each problem names the field it is about,
// or "" for the selector as a whole (a needed field missing).
struct FieldProblem {
  std::string field;
  std::string message;
};
std::vector<FieldProblem> SelectorFieldProblems(SelectorType type,
                                                const std::function<bool(std::string_view)>& given);
std::string EmptyNodesProblem();
// One node id of a nodes selector, after those in `before`.
std::string NodeEntryProblem(std::string_view id, const std::set<std::string, std::less<>>& before);

// retry_policy and its tiers. `field`: "retry_policy.preset",
// "retry_policy.tiers[1].preset", ...
std::string StandsAloneProblem(std::string_view field, bool tier);
std::string EmptyTiersProblem();
std::string BackoffProblem(std::string_view name, std::string_view got);
// initial_interval <= max_interval, when both were given.
std::string IntervalOrderProblem(std::string_view prefix, const RetryTier& t);
// The tiers of preset `name` appended to *out, or the problem (an unknown
// name, with the known ones).
std::string PresetTiers(const RetryPresets& presets, const std::string& name,
                        std::vector<RetryTier>* out);
// The policy `written` stands for, its presets looked up in `presets`.
// Every unknown preset is a problem: (-1 for the policy's own preset, else
// the index of the tier naming it, message). *out is set only without one.
std::vector<std::pair<int, std::string>> ResolveRetryPolicy(const RetryPolicySource& written,
                                                            const RetryPresets& presets,
                                                            RetryPolicy* out);

std::string CompensationIntentMissingProblem();

// target_selector.follow: label and group selectors only.
std::string FollowProblem(SelectorType type);

// A rollout over a following selector: not supported (a node joining later
// would bypass the batches).
std::string FollowRolloutProblem(const TaskSpec& spec);

// rollout. The batch size as written: a count ("2") or a percentage ("25%").
inline constexpr int64_t kMaxRolloutNodes = 100'000;
std::string BatchSizeProblem(std::string_view got, int* count, int* percent);
// Across the block's fields, once each was read: what is missing, or
// given together that cannot be. Each names its field ("" for the block).
std::vector<FieldProblem> RolloutProblems(const RolloutSpec& r, bool have_batch_size,
                                          bool have_canary_wait);
// canary_wait as written: "approve" or a duration (seconds or 30s, 5m).
std::string CanaryWaitHint();

// Across the tasks of one request: duplicate task ids, dependencies on no
// task of the request (nor, if given, on one `external` knows), and cycles.
// `where(i)` says where task i stands ("line 4", "task 2") for the message
// about a duplicate.
struct GraphProblem {
  size_t task = 0;         // the task it is about
  std::string dependency;  // an unknown dependency: the depends_on entry
  std::string message;
};
std::vector<GraphProblem> CheckTaskGraph(const std::vector<const TaskSpec*>& tasks,
                                         const ExternalTaskLookup& external,
                                         const std::function<std::string(size_t)>& where);

}  // namespace apollo::internal
