#pragma once

// What an agent's event does to the (task, node) row it names. The one rule
// both backends apply (src/store/{sqlite,postgres}/apply.cc); each does its
// own I/O for the verdict: history row, alert, row change.
//
//  - kStale: a superseded attempt (the attempt fence), or the attempt a
//    granted-but-unsent retry has already judged FAILED/TIMEOUT (a late
//    report must not burn the retry; chaos seed 219611314).
//  - kRecord: recorded with no change: information-only events, an agent
//    confirming the row's state (ALREADY_RUNNING / ALREADY_DONE / CANCELLED),
//    or an outdated ALREADY_RUNNING for a run that has since ended (the agent
//    decides the answer and logs it a moment later).
//  - kIllegal: refused by CheckTransition: alert + history.
//  - kWalk: applied along `path` (core AgentReportPath: a finished run
//    reported to a row still awaiting the agent's ack walks through RUNNING).
// The test-only switches (test_switches.h) act here too.

#include <cstdint>
#include <optional>
#include <string>

#include "core/event.h"
#include "core/task_state.h"
#include "store/types.h"

namespace apollo::store::engine {

struct EventVerdict {
  enum class Kind { kStale, kRecord, kIllegal, kWalk };
  Kind kind = Kind::kRecord;
  std::string detail;               // kStale, kIllegal: why; kRecord: history detail or ""
  std::optional<TaskState> target;  // kIllegal, kWalk
  ReportPath path;                  // kWalk
};

EventVerdict JudgeEvent(const Event& e, TaskState state, uint32_t attempt, DueKind due);

// The history detail of the RUNNING step a kWalk path implies, e.g.
// "implied by SUCCEEDED of attempt 1: the agent ran it; its ACCEPTED was
// never stored". Both backends write the same text.
std::string ImpliedRunningDetail(const Event& e);

}  // namespace apollo::store::engine
