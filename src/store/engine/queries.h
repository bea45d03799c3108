#pragma once

// Read-side queries of the store. Each runs on a read connection inside one
// read transaction (reader_pool.h), so it sees one committed snapshot.

#include <optional>
#include <string_view>
#include <vector>

#include "store/dead_letter.h"
#include "store/engine/sql.h"
#include "store/lease.h"
#include "store/types.h"

namespace apollo::store::engine {

Result<TaskRow> QueryTask(sql::Conn& db, std::string_view task_id);
Result<TaskPage> QueryTasks(sql::Conn& db, const TaskQuery& q);
Result<std::vector<NodeRow>> QueryNodeTasks(sql::Conn& db, std::string_view node_id, int limit);
Result<std::vector<HistoryRow>> QueryHistory(sql::Conn& db, std::string_view task_id);
Result<std::vector<DueItem>> QueryDue(sql::Conn& db, TimePoint now, int limit);
// Rollouts (rollouts.cc): the active ones (not aborted or completed), or all.
Result<std::vector<RolloutRow>> QueryRollouts(sql::Conn& db, bool active_only);
Result<std::optional<RolloutRow>> QueryRolloutOf(sql::Conn& db, int64_t task_ref);
// Tasks that follow the fleet (follow.cc).
Result<std::vector<FollowingTask>> QueryFollowing(sql::Conn& db);
Result<std::string> QueryPayload(sql::Conn& db, int64_t ref);
Result<int64_t> QueryQueueDepth(sql::Conn& db);

Result<uint64_t> QueryHighestSeq(sql::Conn& db, std::string_view node_id);
Result<std::vector<NodeInfo>> QueryNodes(sql::Conn& db);
Result<std::vector<std::string>> QuerySelector(sql::Conn& db, const TargetSelector& sel);
Result<std::vector<AlertRow>> QueryAlerts(sql::Conn& db, int64_t after_id, int limit);
Result<std::vector<AlertRow>> QueryDueDeliveries(sql::Conn& db, TimePoint now, int limit);
Result<TokenRow> QueryToken(sql::Conn& db, std::string_view hash);
Result<std::vector<TokenRow>> QueryTokens(sql::Conn& db);
Result<std::vector<AuditRow>> QueryAudit(sql::Conn& db, const AuditQuery& query);
// Every lease and replica (leases.cc).
Result<ClusterView> QueryCluster(sql::Conn& db);
Result<std::vector<DeadLetter>> QueryDeadLetters(sql::Conn& db, int64_t after_id, int limit);
Result<DeadLetter> QueryDeadLetter(sql::Conn& db, int64_t id);

}  // namespace apollo::store::engine
