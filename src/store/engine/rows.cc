#include "store/engine/rows.h"

#include <algorithm>
#include <span>

namespace apollo::store::engine {
namespace {

// ord: the key's position in the set, echoed so a loaded row finds its key
// without the task id coming back.
constexpr sql::Column kKeyCols[] = {
    {"ord", sql::Type::kInt}, {"task_id", sql::Type::kText}, {"node_ref", sql::Type::kInt}};

constexpr sql::Statement kStorePayload{
    "INSERT INTO payloads(task_ref, body) VALUES ($1, $2) RETURNING payload_id"};

constexpr sql::Column kUpdateCols[] = {
    {"task_ref", sql::Type::kInt},        {"node_ref", sql::Type::kInt},
    {"old_version", sql::Type::kInt},     {"state", sql::Type::kInt},
    {"version", sql::Type::kInt},         {"attempt", sql::Type::kInt},
    {"retries", sql::Type::kInt},         {"updated_at", sql::Type::kInt},
    {"due_kind", sql::Type::kInt},        {"due_at", sql::Type::kInt},
    {"blocked_reason", sql::Type::kText}, {"last_error", sql::Type::kText},
    {"result", sql::Type::kText},         {"result_ref", sql::Type::kInt},
    {"start_deadline", sql::Type::kInt},  {"extensions", sql::Type::kInt},
    {"permanent", sql::Type::kBool}};
// Unset text columns (NULL) keep their value; a set result replaces the
// ref too (NULL when it is stored inline).
constexpr sql::Statement kUpdateRows{
    "UPDATE task_nodes AS tn SET state = u.state, version = u.version, attempt = u.attempt, "
    "retries = u.retries, updated_at = u.updated_at, due_kind = u.due_kind, due_at = u.due_at, "
    "blocked_reason = COALESCE(u.blocked_reason, tn.blocked_reason), "
    "last_error = COALESCE(u.last_error, tn.last_error), result = COALESCE(u.result, tn.result), "
    "result_ref = CASE WHEN u.result IS NULL THEN tn.result_ref ELSE u.result_ref END, "
    "start_deadline = u.start_deadline, extensions = u.extensions, permanent = u.permanent "
    "FROM @rows WHERE tn.task_ref = u.task_ref AND tn.node_ref = u.node_ref "
    "AND tn.version = u.old_version",
    kUpdateCols};

constexpr sql::Column kHistoryCols[] = {
    {"task_ref", sql::Type::kInt},   {"node_ref", sql::Type::kInt},
    {"cause", sql::Type::kInt},      {"outcome", sql::Type::kInt},
    {"seq", sql::Type::kInt},        {"event_type", sql::Type::kInt},
    {"attempt", sql::Type::kInt},    {"from_state", sql::Type::kInt},
    {"to_state", sql::Type::kInt},   {"version", sql::Type::kInt},
    {"detail", sql::Type::kText},    {"payload", sql::Type::kText},
    {"payload_ref", sql::Type::kInt}};
// hist_id in insertion order: unnest returns rows in array order.
constexpr sql::Statement kInsertHistory{
    "INSERT INTO history(hist_id, task_ref, node_ref, cause, outcome, seq, event_type, attempt, "
    "from_state, to_state, version, at, detail, payload, payload_ref, epoch) "
    "SELECT nextval('hist_ids'), u.task_ref, u.node_ref, u.cause, u.outcome, u.seq, "
    "u.event_type, u.attempt, u.from_state, u.to_state, u.version, $1, u.detail, u.payload, "
    "u.payload_ref, $2 FROM @rows",
    kHistoryCols};

constexpr sql::Column kAlertCols[] = {
    {"kind", sql::Type::kText},      {"task_id", sql::Type::kText}, {"node_id", sql::Type::kText},
    {"from_state", sql::Type::kInt}, {"to_state", sql::Type::kInt}, {"event_id", sql::Type::kText},
    {"detail", sql::Type::kText}};
constexpr sql::Statement kInsertAlerts{
    "INSERT INTO alerts(kind, task_id, node_id, from_state, to_state, event_id, detail, at) "
    "SELECT u.kind, u.task_id, u.node_id, u.from_state, u.to_state, u.event_id, u.detail, $1 "
    "FROM @rows",
    kAlertCols};

constexpr sql::Column kTaskCols[] = {{"task_ref", sql::Type::kInt}};
constexpr sql::Statement kTaskStates{
    "SELECT tn.task_ref, tn.node_ref, tn.state, tn.retries, tn.permanent FROM task_nodes tn, "
    "@rows "
    "WHERE tn.task_ref = u.task_ref",
    kTaskCols};

// The columns RowLoad reads, after the key's ord (ReadRows).
#define APOLLO_LOADED_COLUMNS                                                               \
  "tn.task_ref, tn.node_ref, tn.state, tn.version, tn.attempt, tn.retries, ts.timeout_us, " \
  "ts.max_retries, ts.node_count, tn.updated_at, tn.due_kind, tn.due_at, ts.status, "       \
  "ts.settled_at IS NOT NULL, ts.dependents, ts.start_timeout_us, ts.compensate, "          \
  "tn.start_deadline, tn.extensions, tn.permanent "

// Marks first, then rows (seq.h), each in key order: two writers never wait
// in a cycle; a lock wait re-reads the locked row, so every value is the
// latest. The task's roll-up row is locked with its node rows.
constexpr sql::Statement kLoadRows{"SELECT u.ord, " APOLLO_LOADED_COLUMNS
                                   "FROM tasks t JOIN task_nodes tn ON tn.task_ref = t.task_ref "
                                   "JOIN task_status ts ON ts.task_ref = t.task_ref, @rows "
                                   "WHERE t.task_id = u.task_id AND tn.node_ref = u.node_ref "
                                   "/*@pg ORDER BY tn.task_ref, tn.node_ref FOR UPDATE OF tn, ts*/",
                                   kKeyCols};

// The same by the whole key, from hinted refs; the task id must match too
// (a stale hint finds nothing).
constexpr sql::Column kRefKeyCols[] = {{"ord", sql::Type::kInt},
                                       {"task_ref", sql::Type::kInt},
                                       {"node_ref", sql::Type::kInt},
                                       {"task_id", sql::Type::kText}};
constexpr sql::Statement kLoadRowsByRef{
    "SELECT u.ord, " APOLLO_LOADED_COLUMNS
    "FROM task_nodes tn JOIN task_status ts ON ts.task_ref = tn.task_ref "
    "JOIN tasks t ON t.task_ref = tn.task_ref, @rows "
    "WHERE tn.task_ref = u.task_ref AND tn.node_ref = u.node_ref AND t.task_id = u.task_id "
    "/*@pg ORDER BY tn.task_ref, tn.node_ref FOR UPDATE OF tn, ts*/",
    kRefKeyCols};

#undef APOLLO_LOADED_COLUMNS

sql::RowSet IdKeySet(std::span<const RowKey* const> keys) {
  sql::RowSet set(kLoadRows);
  set.Reserve(keys.size());
  int64_t ord = 0;
  for (const RowKey* k : keys) set.Add(ord++, k->first, k->second);
  return set;
}

// Adds the loaded rows to `out`; `keys` in the order of the set asked.
void ReadRows(const sql::Rows& r, std::span<const RowKey* const> keys, Loaded& out) {
  out.rows.reserve(out.rows.size() + r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    const uint64_t ord = static_cast<uint64_t>(r.Int(i, 0));
    if (ord >= keys.size()) continue;  // not asked (cannot happen)
    Row row;
    row.task_ref = r.Int(i, 1);
    row.node_ref = r.Int(i, 2);
    row.state = static_cast<TaskState>(r.Int(i, 3));
    row.version = row.loaded_version = r.Int(i, 4);
    row.attempt = static_cast<uint32_t>(r.Int(i, 5));
    row.retries = static_cast<int>(r.Int(i, 6));
    row.timeout_us = r.Int(i, 7);
    row.max_retries = static_cast<int>(r.Int(i, 8));
    row.updated_at = r.Int(i, 10);
    row.due_kind = static_cast<DueKind>(r.Int(i, 11));
    row.due_at = r.OptInt(i, 12);
    row.start_timeout_us = r.Int(i, 16);
    row.compensate = r.Bool(i, 17);
    row.start_deadline = r.OptInt(i, 18);
    row.extensions = static_cast<int>(r.Int(i, 19));
    row.permanent = r.Bool(i, 20);
    out.tasks[row.task_ref] = {static_cast<TaskState>(r.Int(i, 13)), r.Bool(i, 14), row.max_retries,
                               static_cast<int>(r.Int(i, 9)), static_cast<int>(r.Int(i, 15))};
    out.rows.emplace(*keys[ord], std::move(row));
  }
}

}  // namespace

RowLoad::RowLoad(WriteTxn& txn, const RowKeys& keys) : txn_(txn), set_(kLoadRows) {
  keys_.reserve(keys.size());
  std::vector<int64_t> refs;
  refs.reserve(keys.size());
  by_ref_ = !keys.empty();
  for (const RowKey& k : keys) {
    keys_.push_back(&k);
    if (!by_ref_) continue;
    std::optional<int64_t> ref = txn.task_refs().Find(k.first);
    if (ref) {
      refs.push_back(*ref);
    } else {
      by_ref_ = false;
    }
  }
  if (!by_ref_) {
    set_ = IdKeySet(keys_);
    return;
  }
  set_ = sql::RowSet(kLoadRowsByRef);
  set_.Reserve(keys_.size());
  for (size_t i = 0; i < keys_.size(); ++i) {
    set_.Add(static_cast<int64_t>(i), refs[i], keys_[i]->second, keys_[i]->first);
  }
}

void RowLoad::Queue() {
  if (keys_.empty()) return;
  txn_.Exec(by_ref_ ? kLoadRowsByRef : kLoadRows, {}, &set_, &out_);
}

Result<Loaded> RowLoad::Finish() {
  Loaded out;
  ReadRows(out_, keys_, out);
  if (!by_ref_) {
    for (const auto& [key, row] : out.rows) txn_.task_refs().Put(key.first, row.task_ref);
    return out;
  }
  std::vector<const RowKey*> missed;
  for (const RowKey* k : keys_) {
    if (!out.rows.contains(*k)) missed.push_back(k);
  }
  if (missed.empty()) return out;
  sql::RowSet again = IdKeySet(missed);
  Result<sql::Rows> r = txn_.Query(kLoadRows, {}, &again);
  if (!r.ok()) return r.status();
  Loaded found;
  ReadRows(*r, missed, found);
  for (auto& [key, row] : found.rows) {
    txn_.task_refs().Put(key.first, row.task_ref);
    out.rows.emplace(key, std::move(row));
  }
  for (const auto& [ref, facts] : found.tasks) out.tasks[ref] = facts;
  return out;
}

Result<Loaded> LoadRows(WriteTxn& txn, const RowKeys& keys) {
  RowLoad load(txn, keys);
  load.Queue();
  APOLLO_RETURN_IF_ERROR(txn.Flush());
  return load.Finish();
}

Result<int64_t> StorePayload(WriteTxn& txn, int64_t task_ref, std::string_view body) {
  sql::Params p(task_ref, body);
  Result<sql::Rows> r = txn.Query(kStorePayload, p);
  if (!r.ok()) return r.status();
  if (r->empty()) return Status::Internal("storing a payload returned no id");
  return r->Int(0, 0);
}

Status ChangeRow(WriteTxn& txn, Row& row, const RowChange& c) {
  row.state = c.to;
  row.version += 1;
  row.attempt = c.attempt;
  row.retries = c.retries;
  row.updated_at = txn.now_us();
  row.due_kind = c.due_kind;
  row.due_at = c.due_at;
  row.blocked_reason = c.blocked_reason;
  row.start_deadline = c.start_deadline;
  row.permanent = c.permanent;
  if (c.last_error) row.last_error = *c.last_error;
  if (c.result) {
    if (c.result->size() > kInlinePayloadMax) {
      Result<int64_t> ref = StorePayload(txn, row.task_ref, *c.result);
      if (!ref.ok()) return ref.status();
      row.result = std::string();
      row.result_ref = *ref;
    } else {
      row.result = *c.result;
      row.result_ref.reset();
    }
  }
  row.dirty = true;
  return Status::Ok();
}

WriteSet::WriteSet(size_t expected_history) : history_(kInsertHistory), alerts_(kInsertAlerts) {
  history_.Reserve(expected_history);
}

Status WriteSet::AddHistory(WriteTxn& txn, const HistoryEntry& e) {
  std::optional<int64_t> payload_ref;
  std::string_view payload = e.payload;
  if (e.payload.size() > kInlinePayloadMax) {
    Result<int64_t> ref = StorePayload(txn, e.task_ref, e.payload);
    if (!ref.ok()) return ref.status();
    payload_ref = *ref;
    payload = {};
  }
  history_.Add(e.task_ref, e.node_ref, e.cause, e.outcome, e.seq, e.type, e.attempt, e.from, e.to,
               e.version, e.detail, payload, payload_ref);
  return Status::Ok();
}

void WriteSet::AddAlert(WriteTxn& txn, const AlertEntry& a) {
  (void)txn;
  alerts_.Add(a.kind, a.task_id, a.node_id, a.from, a.to, a.event_id, a.detail);
}

void WriteSet::FlushLog(WriteTxn& txn) {
  sql::Params at(txn.now_us());
  txn.Exec(kInsertHistory, sql::Params(txn.now_us(), txn.epoch()), &history_);
  txn.Exec(kInsertAlerts, at, &alerts_);
  history_ = sql::RowSet(kInsertHistory);
  alerts_ = sql::RowSet(kInsertAlerts);
}

Result<TaskStates> WriteSet::Flush(WriteTxn& txn, RowMap& rows, const TaskMap& tasks) {
  sql::RowSet updates(kUpdateRows);
  updates.Reserve(rows.size());
  int64_t dirty = 0;
  for (auto& [key, row] : rows) {
    if (!row.dirty) continue;
    ++dirty;
    updates.Add(row.task_ref, row.node_ref, row.loaded_version, row.state, row.version, row.attempt,
                row.retries, row.updated_at, row.due_kind, row.due_at, row.blocked_reason,
                row.last_error, row.result, row.result_ref, row.start_deadline, row.extensions,
                row.permanent);
  }
  txn.ExecExpect(kUpdateRows, {}, &updates, dirty, "compare-and-set on locked task_nodes rows");
  FlushLog(txn);

  // Roll-up input: a task with one node is the row we hold; the rows of
  // the others are read (after the writes above: they include ours).
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  TaskStates states;
  sql::RowSet multi(kTaskStates);
  for (int64_t t : touched_) {
    auto facts = tasks.find(t);
    if (facts == tasks.end() || facts->second.node_count != 1) multi.Add(t);
  }
  if (!multi.empty()) {
    Result<sql::Rows> r = txn.Query(kTaskStates, {}, &multi);
    if (!r.ok()) return r.status();
    states.reserve(r->size() + touched_.size());
    for (size_t i = 0; i < r->size(); ++i) {
      states.push_back({r->Int(i, 0), static_cast<TaskState>(r->Int(i, 2)),
                        static_cast<int>(r->Int(i, 3)), r->Bool(i, 4)});
    }
  }
  for (auto& [key, row] : rows) {
    auto facts = tasks.find(row.task_ref);
    if (row.dirty && facts != tasks.end() && facts->second.node_count == 1 &&
        std::binary_search(touched_.begin(), touched_.end(), row.task_ref)) {
      states.push_back({row.task_ref, row.state, row.retries, row.permanent});
    }
    row.dirty = false;
    row.loaded_version = row.version;
    row.blocked_reason.reset();
    row.last_error.reset();
    row.result.reset();
  }
  std::stable_sort(states.begin(), states.end(),
                   [](const NodeState& a, const NodeState& b) { return a.task_ref < b.task_ref; });
  return states;
}

std::unordered_map<int64_t, TaskChange> ChangesOf(
    const RowMap& rows, const std::unordered_map<int64_t, std::string_view>& node_ids) {
  std::unordered_map<int64_t, TaskChange> changes;
  for (const auto& [key, row] : rows) {
    if (!row.dirty) continue;
    TaskChange& c = changes[row.task_ref];
    if (c.task_id.empty()) c.task_id = key.first;
    NodeRowChange& n = c.nodes.emplace_back();
    if (auto id = node_ids.find(row.node_ref); id != node_ids.end()) n.node_id = id->second;
    n.state = row.state;
    n.from_version = row.loaded_version;
    n.version = row.version;
    n.attempt = row.attempt;
    n.retries = row.retries;
    n.updated_at = FromUnixMicros(row.updated_at);
    n.due_kind = row.due_kind;
    if (row.due_at) n.due_at = FromUnixMicros(*row.due_at);
    if (row.start_deadline) n.start_deadline = FromUnixMicros(*row.start_deadline);
    n.extensions = row.extensions;
    n.permanent = row.permanent;
    n.last_error = row.last_error;
    n.blocked_reason = row.blocked_reason;
    n.result = row.result;
    n.result_elsewhere = row.result && row.result_ref.has_value();
  }
  return changes;
}

}  // namespace apollo::store::engine
