#include "store/postgres/postgres_store.h"

#include "store/heartbeat_batch.h"
#include "store/postgres/apply_op.h"
#include "store/postgres/queries.h"
#include "store/postgres/reader_pool.h"
#include "store/postgres/schema.h"
#include "store/postgres/write_paths.h"
#include "store/postgres/writer.h"

namespace apollo::store::postgres {
namespace {

class PostgresStore final : public StateStore {
 public:
  PostgresStore(std::unique_ptr<Writer> writer, std::unique_ptr<ReaderPool> readers)
      : writer_(std::move(writer)), readers_(std::move(readers)) {}

  // StateStore: tasks, events, transitions
  Result<std::vector<CreatedTask>> CreateTasks(std::span<const NewTask> tasks) override {
    std::vector<NewTask> copy(tasks.begin(), tasks.end());
    return writer_
        ->Submit<std::vector<CreatedTask>>(
            1, [t = std::move(copy)](WriteTxn& txn) { return InsertTasks(txn, t); })
        .get();
  }
  std::future<Result<ApplyResult>> ApplyAsync(std::vector<Event> events) override {
    auto op = std::make_unique<ApplyOp>(std::move(events));
    std::future<Result<ApplyResult>> fut = op->future();
    writer_->Enqueue(std::move(op));
    return fut;
  }
  Result<std::vector<EventOutcome>> Transition(
      std::span<const TransitionRequest> requests) override {
    std::vector<TransitionRequest> copy(requests.begin(), requests.end());
    int weight = static_cast<int>(copy.size());
    return writer_
        ->Submit<std::vector<EventOutcome>>(
            weight, [r = std::move(copy)](WriteTxn& txn) { return ApplyTransitions(txn, r); })
        .get();
  }

  // StateStore: queries
  Result<TaskRow> GetTask(std::string_view task_id) override {
    return readers_->Read([&](ReadCtx& db) { return QueryTask(db, task_id); });
  }
  Result<TaskPage> ListTasks(const TaskQuery& query) override {
    return readers_->Read([&](ReadCtx& db) { return QueryTasks(db, query); });
  }
  Result<std::vector<NodeRow>> ListNodeTasks(std::string_view node_id, int limit) override {
    return readers_->Read([&](ReadCtx& db) { return QueryNodeTasks(db, node_id, limit); });
  }
  Result<std::vector<HistoryRow>> GetHistory(std::string_view task_id) override {
    return readers_->Read([&](ReadCtx& db) { return QueryHistory(db, task_id); });
  }
  Result<std::vector<DueItem>> DueWork(TimePoint now, int limit) override {
    return readers_->Read([&](ReadCtx& db) { return QueryDue(db, now, limit); });
  }
  Result<uint64_t> HighestStoredSeq(std::string_view node_id) override {
    return readers_->Read([&](ReadCtx& db) { return QueryHighestSeq(db, node_id); });
  }
  Result<std::string> GetPayload(int64_t ref) override {
    return readers_->Read([&](ReadCtx& db) { return QueryPayload(db, ref); });
  }
  Result<int64_t> QueueDepth() override {
    return readers_->Read([&](ReadCtx& db) -> Result<int64_t> {
      pqxx::result r = db.Exec("SELECT count(*) FROM task_nodes WHERE state IN ($1, $2, $3)",
                               static_cast<int>(TaskState::kPending),
                               static_cast<int>(TaskState::kDispatched),
                               static_cast<int>(TaskState::kRetrying));
      return r.empty() ? int64_t{0} : r[0][0].as<int64_t>();
    });
  }

  // StateStore: nodes
  Status UpsertNode(const NodeInfo& node) override {
    return WriteStatus([node](WriteTxn& txn) { return WriteNode(txn, node); });
  }
  Status RecordHeartbeat(std::string_view node_id, TimePoint at, std::string_view mode) override {
    return WriteStatus([id = std::string(node_id), at, m = std::string(mode)](WriteTxn& txn) {
      return WriteHeartbeat(txn, id, at, m);
    });
  }
  Result<int> RecordHeartbeats(std::span<const NodeHeartbeat> beats) override {
    return SubmitHeartbeatBatch(*writer_, beats, WriteHeartbeat);
  }
  Result<std::vector<NodeInfo>> ListNodes() override {
    return readers_->Read([&](ReadCtx& db) { return QueryNodes(db); });
  }
  Result<std::vector<std::string>> ResolveSelector(const TargetSelector& sel) override {
    return readers_->Read([&](ReadCtx& db) { return QuerySelector(db, sel); });
  }

  // StateStore: alerts, dead letters, retention
  Result<std::vector<AlertRow>> ListAlerts(int64_t after_id, int limit) override {
    return readers_->Read([&](ReadCtx& db) { return QueryAlerts(db, after_id, limit); });
  }
  Result<int64_t> AddAlert(const AlertRow& alert) override {
    if (alert.kind.empty()) return Status::InvalidArgument("an alert needs a kind");
    return writer_
        ->Submit<int64_t>(1, [alert](WriteTxn& txn) { return InsertAlert(txn, alert); })
        .get();
  }
  Result<int64_t> AddDeadLetter(const DeadLetter& letter) override {
    return writer_
        ->Submit<int64_t>(1, [letter](WriteTxn& txn) { return InsertDeadLetter(txn, letter); })
        .get();
  }
  Result<std::vector<DeadLetter>> ListDeadLetters(int64_t after_id, int limit) override {
    return readers_->Read([&](ReadCtx& db) { return QueryDeadLetters(db, after_id, limit); });
  }
  Result<DeadLetter> GetDeadLetter(int64_t id) override {
    return readers_->Read([&](ReadCtx& db) { return QueryDeadLetter(db, id); });
  }
  Status DropDeadLetter(int64_t id) override {
    return WriteStatus([id](WriteTxn& txn) { return DeleteDeadLetter(txn, id); });
  }
  Result<PurgeStats> Purge(const RetentionPolicy& policy) override {
    return writer_
        ->Submit<PurgeStats>(1, [policy](WriteTxn& txn) { return PurgeOld(txn, policy); })
        .get();
  }
  StoreStats Stats() const override { return writer_->Stats(); }

 private:
  template <typename Fn>
  Status WriteStatus(Fn fn) {
    Result<bool> r = writer_
                         ->Submit<bool>(1,
                                        [fn = std::move(fn)](WriteTxn& txn) -> Result<bool> {
                                          Status st = fn(txn);
                                          if (!st.ok()) return st;
                                          return true;
                                        })
                         .get();
    return r.status();
  }

  std::unique_ptr<Writer> writer_;
  std::unique_ptr<ReaderPool> readers_;
};

}  // namespace

Result<std::unique_ptr<StateStore>> OpenPostgresStore(const std::string& url,
                                                      const StoreOptions& options,
                                                      const Clock& clock) {
  std::string conn_string = ConnectionString(url);
  {
    Result<std::unique_ptr<PgConn>> conn = PgConn::Open(conn_string);
    if (!conn.ok()) return conn.status();
    APOLLO_RETURN_IF_ERROR(Migrate(**conn));
  }
  Result<std::unique_ptr<Writer>> writer = Writer::Start(conn_string, clock, options.batch_cap);
  if (!writer.ok()) return writer.status();
  auto readers = std::make_unique<ReaderPool>(conn_string, options.reader_connections);
  return std::unique_ptr<StateStore>(
      std::make_unique<PostgresStore>(std::move(*writer), std::move(readers)));
}

}  // namespace apollo::store::postgres
