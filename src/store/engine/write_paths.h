#pragma once

// The write paths of the store engine. Each runs on the writer thread inside
// the batch transaction (writer.h); a non-OK Result rolls back the op.

#include <span>
#include <string>
#include <vector>

#include "core/event.h"
#include "store/dead_letter.h"
#include "store/engine/write_txn.h"
#include "store/types.h"

namespace apollo::store::engine {

// Applies `events` in order (they may come from several callers' batches).
Result<ApplyResult> ApplyEvents(WriteTxn& txn, std::span<const Event* const> events);

Result<std::vector<EventOutcome>> ApplyTransitions(WriteTxn& txn,
                                                   const std::vector<TransitionRequest>& reqs);

Result<std::vector<CreatedTask>> InsertTasks(WriteTxn& txn, const std::vector<NewTask>& tasks);

// An alert raised by the orchestrator (StateStore::AddAlert); returns its id.
Result<int64_t> InsertAlert(WriteTxn& txn, const AlertRow& alert);
Result<int64_t> InsertDeadLetter(WriteTxn& txn, const DeadLetter& letter);
Status DeleteDeadLetter(WriteTxn& txn, int64_t id);

Result<PurgeStats> PurgeOld(WriteTxn& txn, const RetentionPolicy& policy);

}  // namespace apollo::store::engine
