// Applying agent events: dedup, fencing, the state machine, CAS, history.
#include <set>

#include "store/sqlite/row_ops.h"
#include "store/sqlite/write_paths.h"
#include "store/event_verdict.h"
#include "store/test_switches.h"

namespace apollo::store::sqlite {
namespace {

bool SeenBefore(const NodeEntry& n, uint64_t seq) {
  return seq <= n.hwm || n.above.count(seq) > 0;
}

// Records `seq` as stored and advances the contiguous high-water mark.
Status MarkSeen(WriteTxn& txn, const std::string& node_id, uint64_t seq) {
  NodeEntry& n = txn.MutableNode(node_id);
  if (seq == n.hwm + 1) {
    n.hwm = seq;
    while (!n.above.empty() && *n.above.begin() == n.hwm + 1) {
      n.hwm = *n.above.begin();
      n.above.erase(n.above.begin());
    }
    n.seq_dirty = true;
    Result<Stmt*> st = txn.db().Prepare("DELETE FROM seq_above WHERE node_ref = ?1 AND seq <= ?2");
    if (!st.ok()) return st.status();
    if (n.hwm > seq) {  // a gap closed: drop the absorbed out-of-order rows
      StmtRef s(*st);
      s->Bind(1, n.ref).Bind(2, static_cast<int64_t>(n.hwm));
      APOLLO_RETURN_IF_ERROR(s->Run());
    }
    return Status::Ok();
  }
  n.above.insert(seq);
  Result<Stmt*> st = txn.db().Prepare("INSERT INTO seq_above(node_ref, seq, at) VALUES (?1, ?2, ?3)");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  s->Bind(1, n.ref).Bind(2, static_cast<int64_t>(seq)).Bind(3, txn.now_us());
  return s->Run();
}

EventOutcome Rejected(Outcome o, std::string reason, std::optional<TaskState> from = {},
                      std::optional<TaskState> to = {}, int64_t version = 0) {
  return EventOutcome{o, std::move(reason), from, to, version};
}

class EventApplier {
 public:
  explicit EventApplier(WriteTxn& txn) : txn_(txn) {}

  Result<EventOutcome> ApplyOne(const Event& e);
  const std::set<int64_t>& touched() const { return touched_; }

 private:
  Result<EventOutcome> ApplyToRow(const Event& e, const RowState& row);
  Status Alert(std::string_view kind, const Event& e, std::optional<TaskState> from,
               std::optional<TaskState> to, std::string_view detail) {
    return AddAlert(txn_, {kind, e.task_id, e.node_id, from, to, e.event_id(), detail});
  }
  Status History(const Event& e, const RowState& row, Outcome o, TaskState to,
                 int64_t version, std::string_view detail) {
    return AppendHistory(txn_, {row.task_ref, row.node_ref, Cause::kEvent, o,
                                static_cast<int64_t>(e.sequence_number), e.type, e.attempt,
                                row.state, to, version, detail, e.payload});
  }

  WriteTxn& txn_;
  std::set<int64_t> touched_;
};

Result<EventOutcome> EventApplier::ApplyOne(const Event& e) {
  const NodeEntry* node = e.node_id.empty() ? nullptr : txn_.FindNode(e.node_id);
  if (node && e.sequence_number > 0 && !TestSwitches::Get().disable_dedup &&
      SeenBefore(*node, e.sequence_number)) {
    ++txn_.stats().events_duplicate;
    return Rejected(Outcome::kDuplicate, "event " + e.event_id() + " already stored");
  }
  Status valid = ValidateEvent(e);
  std::optional<RowState> row;
  if (valid.ok() && node) {
    Result<std::optional<RowState>> r = LoadRow(txn_, e.task_id, node->ref);
    if (!r.ok()) return r.status();
    row = *r;
  }
  // From here on the event counts as stored: its seq is consumed, so a
  // redelivery is a duplicate, whatever the outcome below.
  if (node && e.sequence_number > 0 && !SeenBefore(*node, e.sequence_number)) {
    APOLLO_RETURN_IF_ERROR(MarkSeen(txn_, e.node_id, e.sequence_number));
  }
  static long applied_so_far = 0;  // for drop_event_every; one writer thread
  long drop_every = TestSwitches::Get().drop_event_every;
  if (drop_every > 0 && ++applied_so_far % drop_every == 0) {
    return EventOutcome{Outcome::kApplied, "", {}, {}, 0};
  }
  if (!valid.ok()) {
    ++txn_.stats().malformed;
    APOLLO_RETURN_IF_ERROR(Alert("malformed", e, {}, {}, valid.message()));
    return Rejected(Outcome::kMalformed, valid.message());
  }
  if (!row) {
    ++txn_.stats().unknown_task;
    std::string why = "no task " + e.task_id + " on node " + e.node_id;
    APOLLO_RETURN_IF_ERROR(Alert("unknown_task", e, {}, {}, why));
    return Rejected(Outcome::kUnknownTask, why);
  }
  return ApplyToRow(e, *row);
}

Result<EventOutcome> EventApplier::ApplyToRow(const Event& e, const RowState& row) {
  EventVerdict v = JudgeEvent(e, row.state, row.attempt, row.due_kind);
  switch (v.kind) {
    case EventVerdict::Kind::kStale:
      ++txn_.stats().events_stale;
      APOLLO_RETURN_IF_ERROR(
          History(e, row, Outcome::kStaleAttempt, row.state, row.version, v.detail));
      return Rejected(Outcome::kStaleAttempt, v.detail, row.state, row.state, row.version);
    case EventVerdict::Kind::kRecord:
      ++txn_.stats().events_applied;
      APOLLO_RETURN_IF_ERROR(History(e, row, Outcome::kApplied, row.state, row.version, v.detail));
      return EventOutcome{Outcome::kApplied, "", row.state, row.state, row.version};
    case EventVerdict::Kind::kIllegal:
      ++txn_.stats().illegal_transitions;
      APOLLO_RETURN_IF_ERROR(Alert("illegal_transition", e, row.state, *v.target, v.detail));
      APOLLO_RETURN_IF_ERROR(
          History(e, row, Outcome::kIllegalTransition, row.state, row.version, v.detail));
      return Rejected(Outcome::kIllegalTransition, v.detail, row.state, *v.target, row.version);
    case EventVerdict::Kind::kWalk:
      break;
  }
  const TaskState target = *v.target;
  RowState cur = row;
  for (TaskState step : v.path.view()) {
    Result<bool> updated = UpdateRow(txn_, cur, WalkStep(cur, step, e, txn_.now()));
    if (!updated.ok()) return updated.status();
    if (!*updated) return Status::Internal("CAS lost inside the single writer");
    if (step == target) {
      APOLLO_RETURN_IF_ERROR(History(e, cur, Outcome::kApplied, step, cur.version + 1, ""));
    } else {
      std::string why = ImpliedRunningDetail(e);
      APOLLO_RETURN_IF_ERROR(AppendHistory(
          txn_, {cur.task_ref, cur.node_ref, Cause::kEvent, Outcome::kApplied,
                 static_cast<int64_t>(e.sequence_number), e.type, e.attempt, cur.state, step,
                 cur.version + 1, why, {}}));
    }
    cur.state = step;
    cur.version += 1;
  }
  ++txn_.stats().events_applied;
  APOLLO_RETURN_IF_ERROR(NoteRowChanged(txn_, row, target, row.retries, touched_));
  return EventOutcome{Outcome::kApplied, "", row.state, target, cur.version};
}

}  // namespace

Result<ApplyResult> ApplyEvents(WriteTxn& txn, const std::vector<Event>& events) {
  ApplyResult result;
  result.outcomes.reserve(events.size());
  EventApplier applier(txn);
  for (const Event& e : events) {
    Result<EventOutcome> o = applier.ApplyOne(e);
    if (!o.ok()) return o.status();
    result.outcomes.push_back(std::move(*o));
  }
  APOLLO_RETURN_IF_ERROR(RecomputeTasks(txn, applier.touched()));
  for (const Event& e : events) {
    if (const NodeEntry* n = e.node_id.empty() ? nullptr : txn.FindNode(e.node_id)) {
      result.acked_seq[e.node_id] = n->hwm;
    }
  }
  return result;
}

}  // namespace apollo::store::sqlite
