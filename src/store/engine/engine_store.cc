#include "store/engine/engine_store.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "store/engine/apply_op.h"
#include "store/engine/nodes.h"
#include "store/engine/queries.h"
#include "store/engine/reader_pool.h"
#include "store/engine/schema.h"
#include "store/engine/write_paths.h"
#include "store/engine/writer.h"

namespace apollo::store::engine {
namespace {

class EngineStore final : public StateStore {
 public:
  EngineStore(std::unique_ptr<sql::Driver> driver, std::vector<std::unique_ptr<Writer>> writers,
              size_t event_writers, int readers)
      : driver_(std::move(driver)), writers_(std::move(writers)), readers_(*driver_, readers) {
    for (size_t i = 0; i < event_writers; ++i) event_writers_.push_back(writers_[i].get());
  }

  // StateStore: tasks, events, transitions
  Result<std::vector<CreatedTask>> CreateTasks(std::span<const NewTask> tasks) override {
    return Create(tasks, std::nullopt);
  }
  Result<std::vector<CreatedTask>> CreateTasksAudited(std::span<const NewTask> tasks,
                                                      const AuditRow& audit) override {
    return Create(tasks, audit);
  }
  void SetCommitListener(CommitListener listener) override { listener_.Set(std::move(listener)); }
  std::future<Result<ApplyResult>> ApplyAsync(std::vector<Event> events) override {
    return ApplyOnWriters(std::move(events), event_writers_, listener_);
  }
  Result<std::vector<EventOutcome>> Transition(
      std::span<const TransitionRequest> requests) override {
    std::vector<TransitionRequest> copy(requests.begin(), requests.end());
    int weight = static_cast<int>(copy.size());
    return Write<std::vector<EventOutcome>>(
        weight, [r = std::move(copy)](WriteTxn& txn) { return ApplyTransitions(txn, r); });
  }

  // StateStore: queries
  Result<TaskRow> GetTask(std::string_view task_id) override {
    return readers_.Read([&](sql::Conn& db) { return QueryTask(db, task_id); });
  }
  Result<TaskPage> ListTasks(const TaskQuery& query) override {
    return readers_.Read([&](sql::Conn& db) { return QueryTasks(db, query); });
  }
  Result<std::vector<NodeRow>> ListNodeTasks(std::string_view node_id, int limit) override {
    return readers_.Read([&](sql::Conn& db) { return QueryNodeTasks(db, node_id, limit); });
  }
  Result<std::vector<HistoryRow>> GetHistory(std::string_view task_id) override {
    return readers_.Read([&](sql::Conn& db) { return QueryHistory(db, task_id); });
  }
  Result<std::vector<DueItem>> DueWork(TimePoint now, int limit) override {
    return readers_.Read([&](sql::Conn& db) { return QueryDue(db, now, limit); });
  }
  Result<uint64_t> HighestStoredSeq(std::string_view node_id) override {
    return readers_.Read([&](sql::Conn& db) { return QueryHighestSeq(db, node_id); });
  }
  Result<int64_t> QueueDepth() override {
    return readers_.Read([&](sql::Conn& db) { return QueryQueueDepth(db); });
  }
  Result<std::string> GetPayload(int64_t ref) override {
    return readers_.Read([&](sql::Conn& db) { return QueryPayload(db, ref); });
  }

  // StateStore: rollouts
  Result<std::vector<RolloutRow>> ListRollouts(bool active_only) override {
    return readers_.Read([&](sql::Conn& db) { return QueryRollouts(db, active_only); });
  }
  Status UpdateRollout(const RolloutChange& change) override {
    return WriteStatus([change](WriteTxn& txn) { return WriteRolloutChange(txn, change); });
  }

  // StateStore: runtime DAG changes, following selectors
  Status ChangeDependencies(const DependencyChange& change) override {
    return WriteStatus([change](WriteTxn& txn) { return WriteDependencyChange(txn, change); });
  }
  Status HoldTask(const HoldChange& change) override {
    return WriteStatus([change](WriteTxn& txn) { return WriteHold(txn, change); });
  }
  Result<std::vector<FollowingTask>> ListFollowing() override {
    return readers_.Read([&](sql::Conn& db) { return QueryFollowing(db); });
  }
  Result<bool> AddFollowRow(std::string_view task_id, std::string_view node_id,
                            std::string_view detail) override {
    return Write<bool>(
        1, [t = std::string(task_id), n = std::string(node_id),
            d = std::string(detail)](WriteTxn& txn) { return WriteFollowRow(txn, t, n, d); });
  }
  Status StopFollowing(std::string_view task_id) override {
    return WriteStatus(
        [t = std::string(task_id)](WriteTxn& txn) { return WriteStopFollowing(txn, t); });
  }

  // StateStore: nodes
  Status UpsertNode(const NodeInfo& node) override {
    return WriteStatus([node](WriteTxn& txn) { return WriteNode(txn, node); });
  }
  Status RecordHeartbeat(std::string_view node_id, TimePoint at, std::string_view mode) override {
    NodeHeartbeat beat{std::string(node_id), at, std::string(mode)};
    Result<int> n = RecordHeartbeats({&beat, 1});
    if (!n.ok()) return n.status();
    if (*n == 0) return Status::NotFound("no registered node " + beat.node_id);
    return Status::Ok();
  }
  Result<int> RecordHeartbeats(std::span<const NodeHeartbeat> beats) override {
    if (beats.empty()) return 0;
    std::vector<NodeHeartbeat> copy(beats.begin(), beats.end());
    int weight = static_cast<int>(copy.size());
    return Write<int>(weight,
                      [b = std::move(copy)](WriteTxn& txn) { return WriteHeartbeats(txn, b); });
  }
  Result<std::vector<NodeInfo>> ListNodes() override {
    return readers_.Read([&](sql::Conn& db) { return QueryNodes(db); });
  }
  Result<std::vector<std::string>> ResolveSelector(const TargetSelector& sel) override {
    // Listed ids are the answer as given: no read transaction (on
    // PostgreSQL a round trip per call, and the submit path calls this
    // once per task).
    if (sel.type == SelectorType::kNodes) return sel.nodes;
    return readers_.Read([&](sql::Conn& db) { return QuerySelector(db, sel); });
  }

  // StateStore: alerts, dead letters, retention
  Result<std::vector<AlertRow>> ListAlerts(int64_t after_id, int limit) override {
    return readers_.Read([&](sql::Conn& db) { return QueryAlerts(db, after_id, limit); });
  }
  Result<int64_t> AddAlert(const AlertRow& alert) override {
    if (alert.kind.empty()) return Status::InvalidArgument("an alert needs a kind");
    return Write<int64_t>(1, [alert](WriteTxn& txn) { return InsertAlert(txn, alert); });
  }
  Result<std::vector<AlertRow>> DueAlertDeliveries(TimePoint now, int limit) override {
    return readers_.Read([&](sql::Conn& db) { return QueryDueDeliveries(db, now, limit); });
  }
  Status SetAlertDelivery(int64_t id, AlertDelivery delivery, int attempts, std::string_view detail,
                          std::optional<TimePoint> next_delivery_at) override {
    return WriteStatus(
        [id, delivery, attempts, d = std::string(detail), next_delivery_at](WriteTxn& txn) {
          return SetDelivery(txn, id, delivery, attempts, d, next_delivery_at);
        });
  }
  Result<int64_t> AddDeadLetter(const DeadLetter& letter) override {
    return Write<int64_t>(1, [letter](WriteTxn& txn) { return InsertDeadLetter(txn, letter); });
  }
  Result<std::vector<DeadLetter>> ListDeadLetters(int64_t after_id, int limit) override {
    return readers_.Read([&](sql::Conn& db) { return QueryDeadLetters(db, after_id, limit); });
  }
  Result<DeadLetter> GetDeadLetter(int64_t id) override {
    return readers_.Read([&](sql::Conn& db) { return QueryDeadLetter(db, id); });
  }
  Status DropDeadLetter(int64_t id) override {
    return WriteStatus([id](WriteTxn& txn) { return DeleteDeadLetter(txn, id); });
  }
  Result<PurgeStats> Purge(const RetentionPolicy& policy) override {
    return Write<PurgeStats>(1, [policy](WriteTxn& txn) { return PurgeOld(txn, policy); });
  }
  // StateStore: tokens and the audit trail
  Status CreateToken(const TokenRow& token, bool only_if_first) override {
    return WriteStatus(
        [token, only_if_first](WriteTxn& txn) { return InsertToken(txn, token, only_if_first); });
  }
  Result<TokenRow> FindToken(std::string_view hash) override {
    return readers_.Read([&](sql::Conn& db) { return QueryToken(db, hash); });
  }
  Result<std::vector<TokenRow>> ListTokens() override {
    return readers_.Read([&](sql::Conn& db) { return QueryTokens(db); });
  }
  Status RevokeToken(std::string_view name, TimePoint at) override {
    return WriteStatus(
        [n = std::string(name), at](WriteTxn& txn) { return RevokeTokenNamed(txn, n, at); });
  }
  Result<int64_t> AddAudit(const AuditRow& row) override {
    return Write<int64_t>(1, [row](WriteTxn& txn) { return InsertAudit(txn, row); });
  }
  Result<std::vector<AuditRow>> ListAudit(const AuditQuery& query) override {
    return readers_.Read([&](sql::Conn& db) { return QueryAudit(db, query); });
  }

  Result<LeaseRow> ClaimLease(const LeaseClaim& claim) override {
    return Write<LeaseRow>(1, [claim](WriteTxn& txn) { return WriteLeaseClaim(txn, claim); });
  }
  Status ReleaseLease(std::string_view lease, std::string_view holder, int64_t epoch) override {
    return WriteStatus([l = std::string(lease), h = std::string(holder), epoch](WriteTxn& txn) {
      return WriteLeaseRelease(txn, l, h, epoch);
    });
  }
  Result<ClusterView> ReadCluster() override {
    return readers_.Read([&](sql::Conn& db) { return QueryCluster(db); });
  }

  StoreStats Stats() const override {
    StoreStats all;
    for (const auto& w : writers_) AddStats(all, w->Stats());
    return all;
  }

 private:
  // The tasks, and `audit` if given, in one transaction.
  Result<std::vector<CreatedTask>> Create(std::span<const NewTask> tasks,
                                          std::optional<AuditRow> audit) {
    std::vector<NewTask> copy(tasks.begin(), tasks.end());
    Result<std::vector<std::string>> specs = CanonicalSpecs(copy);
    if (!specs.ok()) return specs.status();
    return Write<std::vector<CreatedTask>>(
        1,
        [t = std::move(copy), s = std::move(*specs),
         a = std::move(audit)](WriteTxn& txn) -> Result<std::vector<CreatedTask>> {
          Result<std::vector<CreatedTask>> created = InsertTasks(txn, t, s);
          if (!created.ok() || !a) return created;
          Result<int64_t> id = InsertAudit(txn, *a);
          if (!id.ok()) return id.status();
          return created;
        });
  }
  template <typename T, typename Fn>
  Result<T> Write(int weight, Fn fn) {
    return OtherWriter().Submit<T>(weight, std::move(fn)).get();
  }
  // A write whose only result is its status.
  template <typename Fn>
  Status WriteStatus(Fn fn) {
    return Write<bool>(1,
                       [fn = std::move(fn)](WriteTxn& txn) -> Result<bool> {
                         APOLLO_RETURN_IF_ERROR(fn(txn));
                         return true;
                       })
        .status();
  }

  // The writer of everything but events: with one writer, that one; with
  // several, the ones after the event writers in turn (see writers_).
  Writer& OtherWriter() {
    const size_t first = writers_.size() == 1 ? 0 : event_writers_.size();
    size_t k = next_.fetch_add(1, std::memory_order_relaxed) % (writers_.size() - first);
    return *writers_[first + k];
  }

  // Declared first: the writers and the readers use it until they are gone.
  std::unique_ptr<sql::Driver> driver_;
  ListenerSlot listener_;  // the writers' ops refer to it until they are gone
  // The first event_writers_.size() apply the agents' events, each node's
  // always on the same one (apply_op.h), so a node's events keep the one
  // order the bus and the sessions rely on (a node's ops commit in
  // submission order, its acks are cumulative). Creates, transitions and
  // the rest go to the others, each with its own connection and
  // transaction, concurrently with the events: the engine locks what it
  // changes before deciding (writer.h), so writers in one process are as
  // safe as replicas sharing a database. SQLite has one writer, which does
  // everything (a second would only wait for the file's write lock).
  std::vector<std::unique_ptr<Writer>> writers_;
  std::vector<Writer*> event_writers_;  // a prefix of writers_
  std::atomic<size_t> next_{0};
  ReaderPool readers_;
};

}  // namespace

Result<std::unique_ptr<StateStore>> OpenEngineStore(std::unique_ptr<sql::Driver> driver,
                                                    const StoreOptions& options,
                                                    const Clock& clock) {
  {
    Result<std::unique_ptr<sql::Conn>> conn = driver->Connect(sql::Role::kWriter);
    if (!conn.ok()) return conn.status();
    APOLLO_RETURN_IF_ERROR(Migrate(**conn, driver->dialect()));
  }
  const int n = driver->dialect() == "sqlite" ? 1 : std::max(1, options.writers);
  // One writer does everything; with more, at least one is left for the
  // rest (creates, dispatch, timeouts).
  const int event_writers = n == 1 ? 1 : std::clamp(options.event_writers, 1, n - 1);
  std::vector<std::unique_ptr<Writer>> writers;
  auto task_refs = std::make_shared<TaskRefHints>(Writer::kTaskRefHints);
  for (int i = 0; i < n; ++i) {
    Result<std::unique_ptr<Writer>> writer =
        Writer::Start(*driver, clock, options.batch_cap, task_refs);
    if (!writer.ok()) return writer.status();
    writers.push_back(std::move(*writer));
  }
  return std::unique_ptr<StateStore>(std::make_unique<EngineStore>(
      std::move(driver), std::move(writers), static_cast<size_t>(event_writers),
      options.reader_connections));
}

}  // namespace apollo::store::engine
