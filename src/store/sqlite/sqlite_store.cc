#include "store/sqlite/sqlite_store.h"

#include "store/heartbeat_batch.h"
#include "store/sqlite/queries.h"
#include "store/sqlite/reader_pool.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/write_paths.h"
#include "store/sqlite/writer.h"

namespace apollo::store::sqlite {
namespace {

// WAL pages that wake the background checkpoint (SQLite's default is 1000).
constexpr int kCheckpointPages = 1000;

class SqliteStore final : public StateStore {
 public:
  SqliteStore(std::unique_ptr<Writer> writer, std::unique_ptr<ReaderPool> readers)
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
    int weight = static_cast<int>(events.size());
    return writer_->Submit<ApplyResult>(
        weight, [e = std::move(events)](WriteTxn& txn) { return ApplyEvents(txn, e); });
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
    return Read([&](Db& db) { return QueryTask(db, task_id); });
  }
  Result<TaskPage> ListTasks(const TaskQuery& query) override {
    return Read([&](Db& db) { return QueryTasks(db, query); });
  }
  Result<std::vector<NodeRow>> ListNodeTasks(std::string_view node_id, int limit) override {
    return Read([&](Db& db) { return QueryNodeTasks(db, node_id, limit); });
  }
  Result<std::vector<HistoryRow>> GetHistory(std::string_view task_id) override {
    return Read([&](Db& db) { return QueryHistory(db, task_id); });
  }
  Result<std::vector<DueItem>> DueWork(TimePoint now, int limit) override {
    return Read([&](Db& db) { return QueryDue(db, now, limit); });
  }
  Result<uint64_t> HighestStoredSeq(std::string_view node_id) override {
    return Read([&](Db& db) { return QueryHighestSeq(db, node_id); });
  }
  Result<std::string> GetPayload(int64_t ref) override {
    return Read([&](Db& db) { return QueryPayload(db, ref); });
  }
  Result<int64_t> QueueDepth() override {
    return Read([&](Db& db) -> Result<int64_t> {
      Result<Stmt*> st = db.Prepare("SELECT count(*) FROM task_nodes WHERE state IN (?1, ?2, ?3)");
      if (!st.ok()) return st.status();
      StmtRef q(*st);
      q->Bind(1, static_cast<int64_t>(TaskState::kPending))
          .Bind(2, static_cast<int64_t>(TaskState::kDispatched))
          .Bind(3, static_cast<int64_t>(TaskState::kRetrying));
      Result<bool> row = q->Step();
      if (!row.ok()) return row.status();
      return *row ? q->Int(0) : int64_t{0};
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
    return Read([&](Db& db) { return QueryNodes(db); });
  }
  Result<std::vector<std::string>> ResolveSelector(const TargetSelector& sel) override {
    return Read([&](Db& db) { return QuerySelector(db, sel); });
  }

  // StateStore: alerts, dead letters, retention
  Result<std::vector<AlertRow>> ListAlerts(int64_t after_id, int limit) override {
    return Read([&](Db& db) { return QueryAlerts(db, after_id, limit); });
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
    return Read([&](Db& db) { return QueryDeadLetters(db, after_id, limit); });
  }
  Result<DeadLetter> GetDeadLetter(int64_t id) override {
    return Read([&](Db& db) { return QueryDeadLetter(db, id); });
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
  auto Read(Fn fn) -> decltype(fn(std::declval<Db&>())) {
    Result<ReaderPool::Lease> lease = readers_->Acquire();
    if (!lease.ok()) return lease.status();
    return fn(lease->db());
  }

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

Status Configure(Db& db, const StoreOptions& options) {
  return db.Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = " +
                 options.sqlite_synchronous + "; PRAGMA cache_size = -" +
                 std::to_string(options.cache_kib) + "; PRAGMA temp_store = MEMORY");
}

}  // namespace

Result<std::unique_ptr<StateStore>> OpenSqliteStore(const std::string& path,
                                                    const StoreOptions& options,
                                                    const Clock& clock) {
  if (options.sqlite_synchronous != "FULL" && options.sqlite_synchronous != "NORMAL") {
    return Status::InvalidArgument("sqlite_synchronous must be FULL or NORMAL, not " +
                                   options.sqlite_synchronous);
  }
  Result<std::unique_ptr<Db>> db = Db::Open(path, /*create=*/true);
  if (!db.ok()) return db.status();
  APOLLO_RETURN_IF_ERROR(Configure(**db, options));
  APOLLO_RETURN_IF_ERROR(Migrate(**db));
  std::unique_ptr<Checkpointer> checkpointer;
  if (options.background_checkpoint) {
    Result<std::unique_ptr<Db>> ckpt_db = Db::Open(path, /*create=*/false);
    if (!ckpt_db.ok()) return ckpt_db.status();
    checkpointer = std::make_unique<Checkpointer>(std::move(*ckpt_db), kCheckpointPages);
  }
  Result<std::unique_ptr<Writer>> writer =
      Writer::Start(std::move(*db), std::move(checkpointer), clock, options.batch_cap);
  if (!writer.ok()) return writer.status();
  auto readers = std::make_unique<ReaderPool>(path, options.reader_connections, options.cache_kib);
  return std::unique_ptr<StateStore>(
      std::make_unique<SqliteStore>(std::move(*writer), std::move(readers)));
}

}  // namespace apollo::store::sqlite
