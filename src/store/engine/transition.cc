// Orchestrator-driven transitions: the same check, CAS and history as events.
#include <set>

#include "store/engine/rows.h"
#include "store/engine/write_paths.h"

namespace apollo::store::engine {
namespace {

EventOutcome Outcomed(Outcome o, std::string reason, const Row& row, std::optional<TaskState> to) {
  return EventOutcome{o, std::move(reason), row.state, to, row.version};
}

// The row after `r`.
RowChange BuildChange(WriteTxn& txn, const TransitionRequest& r, const Row& row) {
  RowChange c;
  c.to = r.to.value_or(row.state);
  bool bump = r.new_attempt || c.to == TaskState::kDispatched;
  c.attempt = bump ? row.attempt + 1 : row.attempt;
  c.retries = c.to == TaskState::kRetrying && r.to ? row.retries + 1 : row.retries;
  FillDue(row, c.to, txn.now(), r.ack_deadline, r.next_attempt_at, c.retries, c);
  if (!r.to && r.new_attempt) {
    // A RETRYING row re-sent: it now waits for the agent's ack, still by
    // the deadline it had to start by.
    c.due_kind = r.ack_deadline ? DueKind::kAckTimeout : DueKind::kNone;
    c.due_at =
        r.ack_deadline ? std::optional<int64_t>(ToUnixMicros(*r.ack_deadline)) : std::nullopt;
    c.blocked_reason = "awaiting_ack since " + FormatRfc3339(txn.now());
    c.start_deadline = row.start_deadline;
    c.due_at = EarlierDue(c.due_at, c.start_deadline);
    if (c.start_deadline && c.due_kind == DueKind::kNone) c.due_kind = DueKind::kAckTimeout;
  }
  if (r.deliver_cancel && c.to == TaskState::kCancelled) {
    c.due_kind = DueKind::kDeliverCancel;
    c.due_at = ToUnixMicros(txn.now());
  }
  if (r.blocked_reason) c.blocked_reason = *r.blocked_reason;
  if ((c.to == TaskState::kFailed || c.to == TaskState::kTimeout) && !r.detail.empty()) {
    c.last_error = r.detail;
  }
  return c;
}

class TransitionApplier {
 public:
  TransitionApplier(WriteTxn& txn, const NodeFacts& refs, RowMap& rows, WriteSet& ws)
      : txn_(txn), refs_(refs), rows_(rows), ws_(ws) {}

  Result<EventOutcome> ApplyOne(const TransitionRequest& r);

 private:
  Status Record(const TransitionRequest& r, const Row& row, TaskState from, Outcome o, TaskState to,
                std::string_view detail) {
    return ws_.AddHistory(txn_, {row.task_ref,
                                 row.node_ref,
                                 r.cause,
                                 o,
                                 std::nullopt,
                                 std::nullopt,
                                 row.attempt,
                                 from,
                                 to,
                                 row.version,
                                 detail,
                                 {}});
  }
  // No state change and no new attempt: a new blocked reason and/or a new
  // ack deadline (the same intent sent again). Bookkeeping: no version bump;
  // but a request with a detail (a resend, a newly blocked row) is recorded
  // in the history so the operator can see it happened.
  Result<EventOutcome> Annotate(const TransitionRequest& r, Row& row);

  WriteTxn& txn_;
  const NodeFacts& refs_;
  RowMap& rows_;
  WriteSet& ws_;
};

Result<EventOutcome> TransitionApplier::Annotate(const TransitionRequest& r, Row& row) {
  if (!r.blocked_reason && !r.ack_deadline && !r.exec_deadline && !r.compensated &&
      !r.cancel_delivered) {
    return Status::InvalidArgument("transition request for " + r.task_id + "/" + r.node_id +
                                   " changes nothing");
  }
  if (r.blocked_reason) row.blocked_reason = *r.blocked_reason;
  if (r.ack_deadline) {
    row.due_kind = DueKind::kAckTimeout;
    row.due_at = EarlierDue(ToUnixMicros(*r.ack_deadline), row.start_deadline);
  }
  if (r.exec_deadline) {
    if (row.state != TaskState::kRunning) {
      return Outcomed(Outcome::kIllegalTransition,
                      "only a RUNNING row has an execution deadline, this one is " +
                          std::string(TaskStateName(row.state)),
                      row, row.state);
    }
    row.due_kind = DueKind::kExecTimeout;
    row.due_at = ToUnixMicros(*r.exec_deadline);
    if (r.extend) ++row.extensions;
  }
  if ((r.compensated && row.due_kind == DueKind::kCompensate) ||
      (r.cancel_delivered && row.due_kind == DueKind::kDeliverCancel)) {
    row.due_kind = DueKind::kNone;
    row.due_at.reset();
  }
  row.dirty = true;
  if (!r.detail.empty()) {
    APOLLO_RETURN_IF_ERROR(Record(r, row, row.state, Outcome::kApplied, row.state, r.detail));
  }
  return Outcomed(Outcome::kApplied, "", row, row.state);
}

Result<EventOutcome> TransitionApplier::ApplyOne(const TransitionRequest& r) {
  Row* row = nullptr;
  if (auto ref = refs_.find(r.node_id); ref != refs_.end()) {
    auto it = rows_.find(RowKey(r.task_id, ref->second.ref));
    if (it != rows_.end()) row = &it->second;
  }
  if (!row) {
    return EventOutcome{
        Outcome::kUnknownTask, "no task " + r.task_id + " on node " + r.node_id, {}, {}, 0};
  }
  if (r.expected_version && *r.expected_version != row->version) {
    return Outcomed(Outcome::kVersionConflict,
                    "expected version " + std::to_string(*r.expected_version) + ", row has " +
                        std::to_string(row->version),
                    *row, r.to);
  }
  TaskState from = row->state;
  if (r.to) {
    TransitionCheck check = CheckTransition(row->state, *r.to);
    if (!check.allowed) {
      ++txn_.stats().illegal_transitions;
      ws_.AddAlert(
          txn_, {"illegal_transition", r.task_id, r.node_id, row->state, *r.to, "", check.reason});
      APOLLO_RETURN_IF_ERROR(
          Record(r, *row, from, Outcome::kIllegalTransition, from, check.reason));
      return Outcomed(Outcome::kIllegalTransition, std::string(check.reason), *row, r.to);
    }
  }
  if (!r.to && !r.new_attempt) return Annotate(r, *row);
  RowChange c = BuildChange(txn_, r, *row);
  APOLLO_RETURN_IF_ERROR(ChangeRow(txn_, *row, c));
  APOLLO_RETURN_IF_ERROR(Record(r, *row, from, Outcome::kApplied, c.to, r.detail));
  ws_.Touch(row->task_ref);
  return EventOutcome{Outcome::kApplied, "", from, c.to, row->version};
}

}  // namespace

Result<std::vector<EventOutcome>> ApplyTransitions(WriteTxn& txn,
                                                   const std::vector<TransitionRequest>& reqs) {
  std::vector<std::string> node_ids;
  for (const TransitionRequest& r : reqs) node_ids.push_back(r.node_id);
  Result<NodeFacts> refs = txn.FindNodes(node_ids);
  if (!refs.ok()) return refs.status();
  RowKeys keys;
  for (const TransitionRequest& r : reqs) {
    if (auto it = refs->find(r.node_id); it != refs->end()) keys.emplace(r.task_id, it->second.ref);
  }
  Result<Loaded> loaded = LoadRows(txn, keys);
  if (!loaded.ok()) return loaded.status();
  WriteSet ws(reqs.size());
  TransitionApplier applier(txn, *refs, loaded->rows, ws);
  std::vector<EventOutcome> out;
  out.reserve(reqs.size());
  for (const TransitionRequest& r : reqs) {
    Result<EventOutcome> o = applier.ApplyOne(r);
    if (!o.ok()) return o.status();
    out.push_back(std::move(*o));
  }
  Result<TaskStates> states = ws.Flush(txn, loaded->rows, loaded->tasks);
  if (!states.ok()) return states.status();
  APOLLO_RETURN_IF_ERROR(RecomputeTasks(txn, ws.touched(), loaded->tasks, *states));
  return out;
}

}  // namespace apollo::store::engine
