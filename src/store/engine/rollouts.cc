// Rollouts: the row that says where one stands, and the one write that moves
// it (gates.h releases the rows of a batch it opens).
#include "store/engine/gates.h"
#include "store/engine/queries.h"
#include "store/engine/rows.h"
#include "store/engine/write_paths.h"

namespace apollo::store::engine {
namespace {

#define APOLLO_ROLLOUT_COLUMNS                                                      \
  "t.task_id, r.state, s.open_batch, r.batches, r.paused_by, r.reason, r.next_at, " \
  "r.tolerated, r.version, r.updated_at FROM rollouts r "                           \
  "JOIN tasks t ON t.task_ref = r.task_ref JOIN task_status s ON s.task_ref = r.task_ref "

constexpr sql::Statement kActiveRollouts{"SELECT " APOLLO_ROLLOUT_COLUMNS
                                         "WHERE r.state < 5 ORDER BY r.task_ref"};
constexpr sql::Statement kAllRollouts{"SELECT " APOLLO_ROLLOUT_COLUMNS "ORDER BY r.task_ref"};
constexpr sql::Statement kRolloutOf{"SELECT " APOLLO_ROLLOUT_COLUMNS "WHERE r.task_ref = $1"};
constexpr sql::Statement kLockRollout{
    "SELECT r.version, s.open_batch, r.batches, s.status, r.state FROM rollouts r "
    "JOIN task_status s ON s.task_ref = r.task_ref WHERE r.task_ref = $1 "
    "/*@pg FOR UPDATE OF r*/"};
constexpr sql::Statement kWriteRollout{
    "UPDATE rollouts SET state = $2, paused_by = $3, reason = $4, next_at = $5, tolerated = $6, "
    "version = version + 1, updated_at = $7 WHERE task_ref = $1 AND version = $8"};

#undef APOLLO_ROLLOUT_COLUMNS

RolloutRow ReadRollout(sql::Rows& r, size_t i) {
  RolloutRow row;
  row.task_id = r.TakeText(i, 0);
  row.state = static_cast<RolloutState>(r.Int(i, 1));
  row.open_batch = static_cast<int>(r.Int(i, 2));
  row.batches = static_cast<int>(r.Int(i, 3));
  row.paused_by = r.TakeText(i, 4);
  row.reason = r.TakeText(i, 5);
  if (!r.IsNull(i, 6)) row.next_at = FromUnixMicros(r.Int(i, 6));
  row.tolerated = static_cast<int>(r.Int(i, 7));
  row.version = r.Int(i, 8);
  row.updated_at = FromUnixMicros(r.Int(i, 9));
  return row;
}

}  // namespace

Result<std::vector<RolloutRow>> QueryRollouts(sql::Conn& db, bool active_only) {
  Result<sql::Rows> r = db.Query(active_only ? kActiveRollouts : kAllRollouts);
  if (!r.ok()) return r.status();
  std::vector<RolloutRow> out;
  out.reserve(r->size());
  for (size_t i = 0; i < r->size(); ++i) out.push_back(ReadRollout(*r, i));
  return out;
}

Result<std::optional<RolloutRow>> QueryRolloutOf(sql::Conn& db, int64_t task_ref) {
  Result<sql::Rows> r = db.Query(kRolloutOf, sql::Params(task_ref));
  if (!r.ok()) return r.status();
  if (r->empty()) return std::optional<RolloutRow>();
  return std::optional<RolloutRow>(ReadRollout(*r, 0));
}

Status WriteRolloutChange(WriteTxn& txn, const RolloutChange& c) {
  Result<int64_t> task_ref = FindTask(txn, c.task_id);
  if (!task_ref.ok()) return task_ref.status();
  Result<sql::Rows> cur = txn.Query(kLockRollout, sql::Params(*task_ref));
  if (!cur.ok()) return cur.status();
  if (cur->empty()) return Status::NotFound("task " + c.task_id + " has no rollout");
  const int64_t version = cur->Int(0, 0);
  const int open_batch = static_cast<int>(cur->Int(0, 1));
  const int batches = static_cast<int>(cur->Int(0, 2));
  if (version != c.expected_version) {
    return Status::FailedPrecondition("the rollout of task " + c.task_id +
                                      " changed meanwhile (version " + std::to_string(version) +
                                      ", expected " + std::to_string(c.expected_version) +
                                      "): read it again");
  }
  if (c.open_batch < open_batch || c.open_batch > batches) {
    return Status::InvalidArgument("rollout of task " + c.task_id + ": batch " +
                                   std::to_string(c.open_batch) +
                                   " cannot be opened (open: " + std::to_string(open_batch) +
                                   " of " + std::to_string(batches) + ")");
  }
  std::optional<int64_t> next_at;
  if (c.next_at) next_at = ToUnixMicros(*c.next_at);
  txn.ExecExpect(kWriteRollout,
                 sql::Params(*task_ref, c.state, c.paused_by, c.reason, next_at, c.tolerated,
                             txn.now_us(), version),
                 nullptr, 1, "rollout write");
  const auto status = static_cast<TaskState>(cur->Int(0, 3));
  const auto was = static_cast<RolloutState>(cur->Int(0, 4));
  if (!c.detail.empty()) {
    APOLLO_RETURN_IF_ERROR(AddTaskHistory(txn, *task_ref, c.cause, status, c.detail));
  }
  if (c.state == RolloutState::kAborted && was == RolloutState::kAborting) {
    // Every row ended: the abort's hold has nothing left to hold.
    GateMove move;
    move.held_by = std::string();
    Result<int> n = RegateTask(txn, *task_ref, move, Cause::kRollout, "rollout aborted");
    if (!n.ok()) return n.status();
  } else if (c.state == RolloutState::kAborting && was != RolloutState::kAborting) {
    // Aborted: from this commit on no row of it may start (a dispatch pass
    // that read a row before loses its compare-and-set); the orchestrator
    // then cancels them (rollout_aborted).
    GateMove move;
    move.held_by = std::string(kRolloutAbortedHold);
    Result<int> n = RegateTask(txn, *task_ref, move, Cause::kRollout, "rollout aborted");
    if (!n.ok()) return n.status();
  } else if (c.open_batch != open_batch) {
    GateMove move;
    move.open_batch = c.open_batch;
    Result<int> n = RegateTask(txn, *task_ref, move, Cause::kRollout,
                               "rollout batch " + std::to_string(c.open_batch) + " of " +
                                   std::to_string(batches) + " opened");
    if (!n.ok()) return n.status();
  }
  return Status::Ok();
}

}  // namespace apollo::store::engine
