#pragma once

// Read-side queries of the SQLite store. Each takes a read connection (from
// ReaderPool) and sees one committed snapshot.

#include <string_view>
#include <vector>

#include "store/dead_letter.h"
#include "store/sqlite/sqlite_handle.h"
#include "store/types.h"

namespace apollo::store::sqlite {

Result<TaskRow> QueryTask(Db& db, std::string_view task_id);
Result<TaskPage> QueryTasks(Db& db, const TaskQuery& q);
Result<std::vector<NodeRow>> QueryNodeTasks(Db& db, std::string_view node_id, int limit);
Result<std::vector<HistoryRow>> QueryHistory(Db& db, std::string_view task_id);
Result<std::vector<DueItem>> QueryDue(Db& db, TimePoint now, int limit);
Result<std::string> QueryPayload(Db& db, int64_t ref);

Result<uint64_t> QueryHighestSeq(Db& db, std::string_view node_id);
Result<std::vector<NodeInfo>> QueryNodes(Db& db);
Result<std::vector<std::string>> QuerySelector(Db& db, const TargetSelector& sel);
Result<std::vector<AlertRow>> QueryAlerts(Db& db, int64_t after_id, int limit);
Result<std::vector<DeadLetter>> QueryDeadLetters(Db& db, int64_t after_id, int limit);
Result<DeadLetter> QueryDeadLetter(Db& db, int64_t id);

}  // namespace apollo::store::sqlite
