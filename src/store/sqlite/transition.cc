// Orchestrator-driven transitions: the same check, CAS and history as events.
#include <set>

#include "store/sqlite/row_ops.h"
#include "store/sqlite/write_paths.h"

namespace apollo::store::sqlite {
namespace {

EventOutcome Outcomed(Outcome o, std::string reason, const RowState& row,
                      std::optional<TaskState> to) {
  return EventOutcome{o, std::move(reason), row.state, to, row.version};
}

Status Record(WriteTxn& txn, const TransitionRequest& r, const RowState& row, Outcome o,
              TaskState to, uint32_t attempt, int64_t version, std::string_view detail) {
  return AppendHistory(txn, {row.task_ref, row.node_ref, r.cause, o, std::nullopt, std::nullopt,
                             attempt, row.state, to, version, detail, {}});
}

// The row after `r`, or why not.
RowChange BuildChange(WriteTxn& txn, const TransitionRequest& r, const RowState& row) {
  RowChange c;
  c.to = r.to.value_or(row.state);
  bool bump = r.new_attempt || c.to == TaskState::kDispatched;
  c.attempt = bump ? row.attempt + 1 : row.attempt;
  c.retries = c.to == TaskState::kRetrying && r.to ? row.retries + 1 : row.retries;
  FillDue(row, c.to, txn.now(), r.ack_deadline, r.next_attempt_at, c.retries, c);
  if (!r.to && r.new_attempt) {
    // A RETRYING row re-sent: it now waits for the agent's ack.
    c.due_kind = r.ack_deadline ? DueKind::kAckTimeout : DueKind::kNone;
    c.due_at = r.ack_deadline ? std::optional<int64_t>(ToUnixMicros(*r.ack_deadline))
                              : std::nullopt;
    c.blocked_reason = "awaiting_ack since " + FormatRfc3339(txn.now());
  }
  if (r.blocked_reason) c.blocked_reason = *r.blocked_reason;
  if ((c.to == TaskState::kFailed || c.to == TaskState::kTimeout) && !r.detail.empty()) {
    c.last_error = r.detail;
  }
  return c;
}

// No state change and no new attempt: a new blocked reason and/or a new ack
// deadline (the same intent sent again). Bookkeeping, so no version bump;
// but a request with a detail (a resend, a newly blocked row) is recorded in
// the history so the operator can see it happened.
Result<EventOutcome> Annotate(WriteTxn& txn, const TransitionRequest& r, const RowState& row) {
  if (!r.blocked_reason && !r.ack_deadline) {
    return Status::InvalidArgument("transition request for " + r.task_id + "/" + r.node_id +
                                   " changes nothing");
  }
  Result<Stmt*> st = txn.db().Prepare(
      "UPDATE task_nodes SET blocked_reason = COALESCE(?3, blocked_reason), "
      "due_kind = CASE WHEN ?4 IS NULL THEN due_kind ELSE ?5 END, "
      "due_at = COALESCE(?4, due_at) WHERE task_ref = ?1 AND node_ref = ?2");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, row.task_ref).Bind(2, row.node_ref);
  if (r.blocked_reason) s->Bind(3, *r.blocked_reason);
  if (r.ack_deadline) s->Bind(4, ToUnixMicros(*r.ack_deadline));
  s->Bind(5, static_cast<int64_t>(DueKind::kAckTimeout));
  APOLLO_RETURN_IF_ERROR(s->Run());
  if (!r.detail.empty()) {
    APOLLO_RETURN_IF_ERROR(
        Record(txn, r, row, Outcome::kApplied, row.state, row.attempt, row.version, r.detail));
  }
  return Outcomed(Outcome::kApplied, "", row, row.state);
}

Result<EventOutcome> ApplyOneTransition(WriteTxn& txn, const TransitionRequest& r,
                                        std::set<int64_t>& touched) {
  const NodeEntry* node = txn.FindNode(r.node_id);
  std::optional<RowState> row;
  if (node) {
    Result<std::optional<RowState>> loaded = LoadRow(txn, r.task_id, node->ref);
    if (!loaded.ok()) return loaded.status();
    row = *loaded;
  }
  if (!row) {
    return EventOutcome{Outcome::kUnknownTask, "no task " + r.task_id + " on node " + r.node_id,
                        {}, {}, 0};
  }
  if (r.expected_version && *r.expected_version != row->version) {
    return Outcomed(Outcome::kVersionConflict,
                    "expected version " + std::to_string(*r.expected_version) + ", row has " +
                        std::to_string(row->version),
                    *row, r.to);
  }
  if (r.to) {
    TransitionCheck check = CheckTransition(row->state, *r.to);
    if (!check.allowed) {
      ++txn.stats().illegal_transitions;
      APOLLO_RETURN_IF_ERROR(AddAlert(txn, {"illegal_transition", r.task_id, r.node_id,
                                            row->state, *r.to, "", check.reason}));
      APOLLO_RETURN_IF_ERROR(Record(txn, r, *row, Outcome::kIllegalTransition, row->state,
                                    row->attempt, row->version, check.reason));
      return Outcomed(Outcome::kIllegalTransition, std::string(check.reason), *row, r.to);
    }
  }
  if (!r.to && !r.new_attempt) return Annotate(txn, r, *row);
  RowChange c = BuildChange(txn, r, *row);
  Result<bool> updated = UpdateRow(txn, *row, c);
  if (!updated.ok()) return updated.status();
  if (!*updated) return Outcomed(Outcome::kVersionConflict, "row changed", *row, r.to);
  APOLLO_RETURN_IF_ERROR(Record(txn, r, *row, Outcome::kApplied, c.to, c.attempt,
                                row->version + 1, r.detail));
  APOLLO_RETURN_IF_ERROR(NoteRowChanged(txn, *row, c.to, c.retries, touched));
  return EventOutcome{Outcome::kApplied, "", row->state, c.to, row->version + 1};
}

}  // namespace

Result<std::vector<EventOutcome>> ApplyTransitions(WriteTxn& txn,
                                                   const std::vector<TransitionRequest>& reqs) {
  std::vector<EventOutcome> out;
  out.reserve(reqs.size());
  std::set<int64_t> touched;
  for (const TransitionRequest& r : reqs) {
    Result<EventOutcome> o = ApplyOneTransition(txn, r, touched);
    if (!o.ok()) return o.status();
    out.push_back(std::move(*o));
  }
  APOLLO_RETURN_IF_ERROR(RecomputeTasks(txn, touched));
  return out;
}

}  // namespace apollo::store::sqlite
