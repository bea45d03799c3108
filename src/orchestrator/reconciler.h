#pragma once

// Snapshot reconciliation (the seed's third layer of "eventually
// consistent"): an agent's view of every task it knows is compared with the
// store's rows for that node, and drift is repaired by legal transitions
// with cause `reconcile` — never by letting an older version win.
//
//   agent ahead of the store (events lost)   -> repair along legal transitions
//   store ahead of the agent (agent lost disk)-> the store wins, nothing moves
//   DISPATCHED in the store, unknown to agent -> send the intent again
//   RUNNING in the store, unknown to agent    -> FAILED (lost with its log), so
//                                                the retry policy decides
//   known to the agent, unknown to the store  -> an alert row (kind
//                                                unknown_to_store), counted
//
// A repair is made only when every event the agent logged about the task
// is already below the store's high-water mark for the node: otherwise the
// events are still in flight and will arrive by themselves.
//
// Thread-safety: FindDrift and LegalPath are pure; ApplyDrift uses the
// (thread-safe) store.

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/task_state.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

struct AgentTaskView {
  std::string task_id;
  uint32_t attempt = 0;
  TaskState status = TaskState::kRunning;
  uint64_t last_seq = 0;
};

struct NodeSnapshot {
  std::string node_id;
  std::vector<AgentTaskView> tasks;
  uint64_t durable_seq = 0;
  bool complete = true;  // false: the agent knows it lost part of its state
  TimePoint received_at{};
};

enum class DriftAction { kRepair, kRedispatch, kFailLost, kStoreAhead, kUnknownToStore, kInFlight };
std::string_view DriftActionName(DriftAction a);

struct DriftItem {
  std::string node_id;
  std::string task_id;
  uint32_t attempt = 0;
  std::optional<TaskState> store_state;
  std::optional<TaskState> agent_state;
  DriftAction action = DriftAction::kStoreAhead;
  std::vector<TaskState> path;  // kRepair: the states to move through, in order
  int64_t version = 0;          // the row's version when compared
  std::string detail;
};

// The shortest chain of legal transitions leading from `from` to `to`
// (excluding `from`); empty if there is none or from == to.
std::vector<TaskState> LegalPath(TaskState from, TaskState to);

// Compares one node's snapshot with the store's rows for that node.
std::vector<DriftItem> FindDrift(const NodeSnapshot& snapshot,
                                 const std::vector<store::NodeRow>& rows, uint64_t stored_hwm);

// Applies the repairs (kRepair, kRedispatch, kFailLost) through the store's
// checked transitions with cause kReconcile. Returns how many rows changed.
Result<int> ApplyDrift(store::StateStore& store, const std::vector<DriftItem>& drift,
                       const Clock& clock);

// Writes one alert row (kind "unknown_to_store", naming node and task) per
// kUnknownToStore item of `drift`; the others are ignored. Returns how many
// were written.
Result<int> RaiseDriftAlerts(store::StateStore& store, const std::vector<DriftItem>& drift);

}  // namespace apollo::orchestrator
