#include "store/engine/event_verdict.h"

#include "store/test_switches.h"

namespace apollo::store::engine {

EventVerdict JudgeEvent(const Event& e, TaskState state, uint32_t attempt, DueKind due) {
  using Kind = EventVerdict::Kind;
  const bool fencing = !TestSwitches::Get().disable_fencing;
  if (e.attempt != attempt && fencing) {
    return {Kind::kStale,
            "attempt " + std::to_string(e.attempt) + " superseded by attempt " +
                std::to_string(attempt),
            {},
            {}};
  }
  std::optional<TaskState> target = TargetState(e.type);
  if (target && state == TaskState::kRetrying && due == DueKind::kRetry && fencing) {
    return {Kind::kStale,
            "attempt " + std::to_string(attempt) +
                " already judged; its retry is granted and not yet sent",
            {},
            {}};
  }
  if (!target) return {};
  bool confirm =
      *target == state && (e.type == EventType::kAlreadyRunning ||
                           e.type == EventType::kAlreadyDone || e.type == EventType::kCancelled);
  if (confirm) return {};
  // The center already ended this attempt TIMEOUT (execution timeout, or
  // not started) and told the agent to stop it: the agent's CANCELLED or
  // TIMEOUT of the same attempt confirms the stop, it is no anomaly.
  if (state == TaskState::kTimeout &&
      (e.type == EventType::kCancelled || e.type == EventType::kTimeout)) {
    return {Kind::kRecord, "the agent stopped the run the center had timed out", {}, {}};
  }
  if (e.type == EventType::kAlreadyRunning && (IsFinal(state) || IsFinalUnlessRetried(state))) {
    return {
        Kind::kRecord,
        "outdated answer: this attempt's run already ended " + std::string(TaskStateName(state)),
        {},
        {}};
  }
  ReportPath path = AgentReportPath(state, *target);
  if (path.size == 0 && TestSwitches::Get().disable_transition_check) {
    path.steps[0] = *target;  // planted bug (tests/chaos): applied anyway
    path.size = 1;
  }
  if (path.size == 0) {
    return {Kind::kIllegal, std::string(CheckTransition(state, *target).reason), target, {}};
  }
  return {Kind::kWalk, "", target, path};
}

std::string ImpliedRunningDetail(const Event& e) {
  std::string d = "implied by ";
  d += EventTypeName(e.type);
  d += " of attempt " + std::to_string(e.attempt) +
       ": the agent ran it; its ACCEPTED was never stored";
  return d;
}

}  // namespace apollo::store::engine
