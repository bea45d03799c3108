// Applying agent events: dedup, fencing, the state machine, CAS, history.
// Decided over rows loaded for the whole batch (rows.h, seq.h) and written
// back with a few set-based statements.
#include <atomic>
#include <set>
#include <string_view>
#include <unordered_set>

#include "store/engine/event_verdict.h"
#include "store/engine/rows.h"
#include "store/engine/seq.h"
#include "store/engine/write_paths.h"
#include "store/test_switches.h"

namespace apollo::store::engine {
namespace {

EventOutcome Rejected(Outcome o, std::string reason, std::optional<TaskState> from = {},
                      std::optional<TaskState> to = {}, int64_t version = 0) {
  return EventOutcome{o, std::move(reason), from, to, version};
}

class EventApplier {
 public:
  EventApplier(WriteTxn& txn, const NodeFacts& refs, SeqMap& seqs, RowMap& rows, WriteSet& ws)
      : txn_(txn), refs_(refs), seqs_(seqs), rows_(rows), ws_(ws) {}

  Result<EventOutcome> ApplyOne(const Event& e, const Status& valid);

 private:
  Result<EventOutcome> ApplyToRow(const Event& e, Row& row);
  void Alert(std::string_view kind, const Event& e, std::optional<TaskState> from,
             std::optional<TaskState> to, std::string_view detail) {
    ws_.AddAlert(txn_, {kind, e.task_id, e.node_id, from, to, e.event_id(), detail});
  }
  Status History(const Event& e, const Row& row, TaskState from, Outcome o, TaskState to,
                 std::string_view detail, bool with_payload = true) {
    return ws_.AddHistory(
        txn_, {row.task_ref, row.node_ref, Cause::kEvent, o,
               static_cast<int64_t>(e.sequence_number), e.type, e.attempt, from, to, row.version,
               detail, with_payload ? std::string_view(e.payload) : std::string_view()});
  }

  WriteTxn& txn_;
  const NodeFacts& refs_;
  SeqMap& seqs_;
  RowMap& rows_;
  WriteSet& ws_;
};

Result<EventOutcome> EventApplier::ApplyOne(const Event& e, const Status& valid) {
  auto ref = e.node_id.empty() ? refs_.end() : refs_.find(e.node_id);
  SeqState* seq = ref == refs_.end() ? nullptr : &seqs_[ref->second.ref];
  if (seq && e.sequence_number > 0 && !TestSwitches::Get().disable_dedup &&
      SeenBefore(*seq, e.sequence_number)) {
    ++txn_.stats().events_duplicate;
    return Rejected(Outcome::kDuplicate, "event " + e.event_id() + " already stored");
  }
  Row* row = nullptr;
  if (valid.ok() && seq) {
    auto it = rows_.find(RowKey(e.task_id, ref->second.ref));
    if (it != rows_.end()) row = &it->second;
  }
  // From here on the event counts as stored: its seq is consumed, so a
  // redelivery is a duplicate, whatever the outcome below.
  if (seq && e.sequence_number > 0 && !SeenBefore(*seq, e.sequence_number)) {
    MarkSeen(*seq, e.sequence_number);
  }
  static std::atomic<long> applied_so_far{0};  // for drop_event_every; all event writers
  long drop_every = TestSwitches::Get().drop_event_every;
  if (drop_every > 0 && (applied_so_far.fetch_add(1) + 1) % drop_every == 0) {
    return EventOutcome{Outcome::kApplied, "", {}, {}, 0};
  }
  if (!valid.ok()) {
    ++txn_.stats().malformed;
    Alert("malformed", e, {}, {}, valid.message());
    return Rejected(Outcome::kMalformed, valid.message());
  }
  if (!row) {
    ++txn_.stats().unknown_task;
    std::string why = "no task " + e.task_id + " on node " + e.node_id;
    Alert("unknown_task", e, {}, {}, why);
    return Rejected(Outcome::kUnknownTask, why);
  }
  return ApplyToRow(e, *row);
}

Result<EventOutcome> EventApplier::ApplyToRow(const Event& e, Row& row) {
  TaskState from = row.state;
  EventVerdict v = JudgeEvent(e, from, row.attempt, row.due_kind);
  switch (v.kind) {
    case EventVerdict::Kind::kStale:
      ++txn_.stats().events_stale;
      APOLLO_RETURN_IF_ERROR(History(e, row, from, Outcome::kStaleAttempt, from, v.detail));
      return Rejected(Outcome::kStaleAttempt, v.detail, from, from, row.version);
    case EventVerdict::Kind::kRecord:
      ++txn_.stats().events_applied;
      APOLLO_RETURN_IF_ERROR(History(e, row, from, Outcome::kApplied, from, v.detail));
      return EventOutcome{Outcome::kApplied, "", from, from, row.version};
    case EventVerdict::Kind::kIllegal:
      ++txn_.stats().illegal_transitions;
      Alert("illegal_transition", e, from, *v.target, v.detail);
      APOLLO_RETURN_IF_ERROR(History(e, row, from, Outcome::kIllegalTransition, from, v.detail));
      return Rejected(Outcome::kIllegalTransition, v.detail, from, *v.target, row.version);
    case EventVerdict::Kind::kWalk:
      break;
  }
  const TaskState target = *v.target;
  for (TaskState step : v.path.view()) {
    TaskState step_from = row.state;
    APOLLO_RETURN_IF_ERROR(ChangeRow(txn_, row, WalkStep(row, step, e, txn_.now())));
    if (step == target) {
      APOLLO_RETURN_IF_ERROR(History(e, row, step_from, Outcome::kApplied, step, ""));
    } else {
      APOLLO_RETURN_IF_ERROR(History(e, row, step_from, Outcome::kApplied, step,
                                     ImpliedRunningDetail(e), /*with_payload=*/false));
    }
  }
  ++txn_.stats().events_applied;
  ws_.Touch(row.task_ref);
  return EventOutcome{Outcome::kApplied, "", from, target, row.version};
}

}  // namespace

Result<ApplyResult> ApplyEvents(WriteTxn& txn, std::span<const Event* const> events,
                                std::vector<TaskChange>* changes) {
  std::vector<std::string> node_ids;  // each once: a batch has few nodes, many events
  std::unordered_set<std::string_view> seen;
  for (const Event* e : events) {
    if (!e->node_id.empty() && seen.insert(e->node_id).second) node_ids.push_back(e->node_id);
  }
  Result<NodeFacts> refs = txn.FindNodes(node_ids);
  if (!refs.ok()) return refs.status();
  std::set<int64_t> node_refs;
  for (const auto& [id, fact] : *refs) node_refs.insert(fact.ref);

  std::vector<Status> valid;
  valid.reserve(events.size());
  RowKeys keys;
  for (const Event* e : events) {
    valid.push_back(ValidateEvent(*e));
    auto it = e->node_id.empty() ? refs->end() : refs->find(e->node_id);
    if (valid.back().ok() && it != refs->end()) keys.emplace(e->task_id, it->second.ref);
  }
  // Marks, then rows: one round trip.
  sql::RowSet seq_keys = SeqKeys(node_refs);
  sql::Rows locked_seqs;
  txn.Exec(kLockSeqs, {}, &seq_keys, &locked_seqs);
  RowLoad row_load(txn, keys);
  row_load.Queue();
  APOLLO_RETURN_IF_ERROR(txn.Flush());
  SeqMap seqs;
  APOLLO_RETURN_IF_ERROR(LoadSeqs(txn, node_refs, locked_seqs, seqs));
  Result<Loaded> loaded_rows = row_load.Finish();
  if (!loaded_rows.ok()) return loaded_rows.status();
  Loaded& loaded = *loaded_rows;

  WriteSet ws(events.size() + events.size() / 2);
  EventApplier applier(txn, *refs, seqs, loaded.rows, ws);
  ApplyResult result;
  result.outcomes.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    Result<EventOutcome> o = applier.ApplyOne(*events[i], valid[i]);
    if (!o.ok()) return o.status();
    result.outcomes.push_back(std::move(*o));
  }
  std::unordered_map<int64_t, TaskChange> changed;
  if (changes) {  // before the flush, which forgets the texts written
    std::unordered_map<int64_t, std::string_view> node_ids;
    for (const auto& [id, fact] : *refs) node_ids.emplace(fact.ref, id);
    changed = ChangesOf(loaded.rows, node_ids);
  }
  Result<TaskStates> states = ws.Flush(txn, loaded.rows, loaded.tasks);
  if (!states.ok()) return states.status();
  FlushSeqs(txn, seqs);
  Rollups rollups;
  APOLLO_RETURN_IF_ERROR(
      RecomputeTasks(txn, ws.touched(), loaded.tasks, *states, changes ? &rollups : nullptr));
  for (auto& [ref, c] : changed) {
    auto r = rollups.find(ref);
    if (r == rollups.end()) continue;  // not rolled up: the watcher reads
    c.status = r->second.status;
    c.node_count = r->second.nodes;
    if (r->second.written) c.status_at = FromUnixMicros(txn.now_us());
    changes->push_back(std::move(c));
  }
  // refs holds exactly the nodes of these events: one mark per node.
  for (const auto& [id, fact] : *refs) result.acked_seq[id] = seqs[fact.ref].hwm;
  return result;
}

}  // namespace apollo::store::engine
