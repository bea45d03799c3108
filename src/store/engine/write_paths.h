#pragma once

// The write paths of the store engine. Each runs on the writer thread inside
// the batch transaction (writer.h); a non-OK Result rolls back the op.

#include <span>
#include <string>
#include <vector>

#include "core/event.h"
#include "store/dead_letter.h"
#include "store/engine/write_txn.h"
#include "store/lease.h"
#include "store/task_change.h"
#include "store/types.h"

namespace apollo::store::engine {

// Applies `events` in order (they may come from several callers' batches).
// `changes`, when given, receives what the op leaves of each task whose
// rows it changed (task_change.h), for the commit listener.
Result<ApplyResult> ApplyEvents(WriteTxn& txn, std::span<const Event* const> events,
                                std::vector<TaskChange>* changes = nullptr);

Result<std::vector<EventOutcome>> ApplyTransitions(WriteTxn& txn,
                                                   const std::vector<TransitionRequest>& reqs);

// The canonical spec of each task (what an idempotent resubmission must
// match), computed by the caller before the op is queued: JSON work that
// need not hold the writer thread.
Result<std::vector<std::string>> CanonicalSpecs(const std::vector<NewTask>& tasks);
// `specs`: CanonicalSpecs(tasks).
Result<std::vector<CreatedTask>> InsertTasks(WriteTxn& txn, const std::vector<NewTask>& tasks,
                                             const std::vector<std::string>& specs);

// Moves a rollout (rollouts.cc).
Status WriteRolloutChange(WriteTxn& txn, const RolloutChange& change);

// Runtime DAG changes (dag_changes.cc) and following selectors (follow.cc).
Status WriteDependencyChange(WriteTxn& txn, const DependencyChange& change);
Status WriteHold(WriteTxn& txn, const HoldChange& change);
Result<bool> WriteFollowRow(WriteTxn& txn, const std::string& task_id, const std::string& node_id,
                            const std::string& detail);
Status WriteStopFollowing(WriteTxn& txn, const std::string& task_id);

// An alert raised by the orchestrator (StateStore::AddAlert); returns its id.
Result<int64_t> InsertAlert(WriteTxn& txn, const AlertRow& alert);
Result<int64_t> InsertDeadLetter(WriteTxn& txn, const DeadLetter& letter);
Status DeleteDeadLetter(WriteTxn& txn, int64_t id);

Status SetDelivery(WriteTxn& txn, int64_t id, AlertDelivery delivery, int attempts,
                   std::string_view detail, std::optional<TimePoint> next_delivery_at);

Result<PurgeStats> PurgeOld(WriteTxn& txn, const RetentionPolicy& policy);

// Tokens and the audit trail (access.cc).
Status InsertToken(WriteTxn& txn, const TokenRow& token, bool only_if_first);
Status RevokeTokenNamed(WriteTxn& txn, std::string_view name, TimePoint at);
Result<int64_t> InsertAudit(WriteTxn& txn, const AuditRow& row);

// Leases and fences (leases.cc, lease.h).
Result<LeaseRow> WriteLeaseClaim(WriteTxn& txn, const LeaseClaim& claim);
Status WriteLeaseRelease(WriteTxn& txn, std::string_view lease, std::string_view holder,
                         int64_t epoch);
// A fence check in two halves, so it rides with the op's first round trip
// instead of taking one of its own: AskFence queues the read of the lease
// row (share locked from then until the transaction ends) into `answer`;
// after the next flush, FenceVerdict is OK when `fence` still holds its
// lease at its epoch, kFailedPrecondition "fenced: ..." if not.
struct FenceAnswer {
  const Fence* fence = nullptr;  // what was asked; outlives the answer
  sql::Rows rows;
  int64_t arrived = -1;  // set (>= 0) once the read ran
};
void AskFence(WriteTxn& txn, const Fence& fence, FenceAnswer& answer);
Status FenceVerdict(FenceAnswer& answer);

}  // namespace apollo::store::engine
