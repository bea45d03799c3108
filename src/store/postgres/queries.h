#pragma once

// Read-side queries of the PostgreSQL store. Each runs inside one read-only
// snapshot (ReaderPool) and may throw pqxx exceptions (the pool catches).

#include <string_view>
#include <vector>

#include "store/dead_letter.h"
#include "store/postgres/reader_pool.h"
#include "store/types.h"

namespace apollo::store::postgres {

Result<TaskRow> QueryTask(ReadCtx& db, std::string_view task_id);
Result<TaskPage> QueryTasks(ReadCtx& db, const TaskQuery& q);
Result<std::vector<NodeRow>> QueryNodeTasks(ReadCtx& db, std::string_view node_id, int limit);
Result<std::vector<HistoryRow>> QueryHistory(ReadCtx& db, std::string_view task_id);
Result<std::vector<DueItem>> QueryDue(ReadCtx& db, TimePoint now, int limit);
Result<std::string> QueryPayload(ReadCtx& db, int64_t ref);

Result<uint64_t> QueryHighestSeq(ReadCtx& db, std::string_view node_id);
Result<std::vector<NodeInfo>> QueryNodes(ReadCtx& db);
Result<std::vector<std::string>> QuerySelector(ReadCtx& db, const TargetSelector& sel);
Result<std::vector<AlertRow>> QueryAlerts(ReadCtx& db, int64_t after_id, int limit);
Result<std::vector<DeadLetter>> QueryDeadLetters(ReadCtx& db, int64_t after_id, int limit);
Result<DeadLetter> QueryDeadLetter(ReadCtx& db, int64_t id);

}  // namespace apollo::store::postgres
