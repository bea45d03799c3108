#pragma once

// The SQLite schema and its migrations. Times are integer microseconds since
// the Unix epoch (store clock); states, causes and outcomes are the integer
// values of the core/store enums.
//
// Layout chosen for the write path (about 1.5 row writes per event):
//  - tasks / nodes get integer refs; hot tables key on those, not on text.
//  - tasks rows stay narrow (the spec lives in task_specs); single-node
//    tasks roll up without re-reading their rows (node_count).
//  - task_nodes is WITHOUT ROWID, keyed (task_ref, node_ref): one seek.
//  - history is WITHOUT ROWID, keyed (task_ref, hist_id): appending a task's
//    history and reading it in order touch one b-tree, no second index.
//  - dedup costs no row per event: node_seq keeps each node's contiguous
//    high-water mark (one row write per node per batch); only events that
//    arrive above a gap get a seq_above row until the gap closes.
//  - one partial index (due_at) serves every kind of due work.

#include "core/status.h"
#include "store/sqlite/sqlite_handle.h"

namespace apollo::store::sqlite {

inline constexpr int kSchemaVersion = 1;

// Creates or upgrades the schema to kSchemaVersion inside one transaction.
// FailedPrecondition if the file is from a newer version.
Status Migrate(Db& db);

}  // namespace apollo::store::sqlite
