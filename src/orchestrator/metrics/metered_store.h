#pragma once

// MeteredStore: a StateStore that forwards every call to another and counts
// what the writes did (OrchestratorMetrics): every committed row change by
// from/to/cause, the duration of each write, ingest batch sizes and
// outcomes, and two latencies per (task, node) row — creation to first
// RUNNING, and each dispatch to its acknowledgement.
//
// Why a decorator: every row change of the center passes through the store
// interface (the dispatcher's Transition, the bus's ApplyAsync, the submit
// path's CreateTasks), so one wrapper made in main.cc sees all of them
// without touching the store, the bus or the dispatcher. Reads pass through
// untimed.
//
// ApplyAsync's duration is measured until its caller collects the result
// (the returned future is a deferred one that waits for the inner future):
// an upper bound of the commit when the caller pipelines batches. Callers
// only call get() on it (a deferred future answers wait_for with
// future_status::deferred).
//
// The latency tables hold at most kMaxTracked rows each (then new rows go
// untracked and are counted); a row leaves them when it is acknowledged or
// ends. Times come from the injected Clock. After a restart the rows already
// in flight are not measured.
//
// Thread-safety: as StateStore (any thread); the tables are guarded by mu_.

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "core/clock.h"
#include "orchestrator/metrics/orchestrator_metrics.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

class MeteredStore final : public store::StateStore {
 public:
  static constexpr size_t kMaxTracked = 200'000;

  // `inner`, `metrics` and `clock` must outlive this store.
  MeteredStore(store::StateStore& inner, OrchestratorMetrics& metrics, const Clock& clock)
      : inner_(inner), metrics_(metrics), clock_(clock) {}

  // Writes, measured.
  Result<std::vector<store::CreatedTask>> CreateTasks(
      std::span<const store::NewTask> tasks) override;
  Result<std::vector<store::CreatedTask>> CreateTasksAudited(std::span<const store::NewTask> tasks,
                                                             const store::AuditRow& audit) override;
  std::future<Result<store::ApplyResult>> ApplyAsync(std::vector<Event> events) override;
  Result<std::vector<store::EventOutcome>> Transition(
      std::span<const store::TransitionRequest> requests) override;
  Result<int> RecordHeartbeats(std::span<const store::NodeHeartbeat> beats) override;

  // Everything else, forwarded as is.
  void SetCommitListener(store::CommitListener listener) override {
    inner_.SetCommitListener(std::move(listener));
  }
  Result<store::TaskRow> GetTask(std::string_view id) override { return inner_.GetTask(id); }
  Result<store::TaskPage> ListTasks(const store::TaskQuery& q) override {
    return inner_.ListTasks(q);
  }
  Result<std::vector<store::NodeRow>> ListNodeTasks(std::string_view node, int limit) override {
    return inner_.ListNodeTasks(node, limit);
  }
  Result<std::vector<store::HistoryRow>> GetHistory(std::string_view id) override {
    return inner_.GetHistory(id);
  }
  Result<std::vector<store::DueItem>> DueWork(TimePoint now, int limit) override {
    return inner_.DueWork(now, limit);
  }
  Result<uint64_t> HighestStoredSeq(std::string_view node) override {
    return inner_.HighestStoredSeq(node);
  }
  Result<int64_t> QueueDepth() override { return inner_.QueueDepth(); }
  Result<std::string> GetPayload(int64_t ref) override { return inner_.GetPayload(ref); }
  Result<std::vector<store::RolloutRow>> ListRollouts(bool active_only) override {
    return inner_.ListRollouts(active_only);
  }
  Status UpdateRollout(const store::RolloutChange& change) override {
    return inner_.UpdateRollout(change);
  }
  Status ChangeDependencies(const store::DependencyChange& change) override {
    return inner_.ChangeDependencies(change);
  }
  Status HoldTask(const store::HoldChange& change) override { return inner_.HoldTask(change); }
  Result<std::vector<store::FollowingTask>> ListFollowing() override {
    return inner_.ListFollowing();
  }
  Result<bool> AddFollowRow(std::string_view task_id, std::string_view node_id,
                            std::string_view detail) override {
    return inner_.AddFollowRow(task_id, node_id, detail);
  }
  Status StopFollowing(std::string_view task_id) override { return inner_.StopFollowing(task_id); }
  Status UpsertNode(const store::NodeInfo& node) override { return inner_.UpsertNode(node); }
  Status RecordHeartbeat(std::string_view node, TimePoint at, std::string_view mode) override {
    return inner_.RecordHeartbeat(node, at, mode);
  }
  Result<std::vector<store::NodeInfo>> ListNodes() override { return inner_.ListNodes(); }
  Result<std::vector<std::string>> ResolveSelector(const TargetSelector& sel) override {
    return inner_.ResolveSelector(sel);
  }
  Result<std::vector<store::AlertRow>> ListAlerts(int64_t after_id, int limit) override {
    return inner_.ListAlerts(after_id, limit);
  }
  Result<int64_t> AddAlert(const store::AlertRow& alert) override { return inner_.AddAlert(alert); }
  Result<std::vector<store::AlertRow>> DueAlertDeliveries(TimePoint now, int limit) override {
    return inner_.DueAlertDeliveries(now, limit);
  }
  Status SetAlertDelivery(int64_t id, store::AlertDelivery delivery, int attempts,
                          std::string_view detail, std::optional<TimePoint> next) override {
    return inner_.SetAlertDelivery(id, delivery, attempts, detail, next);
  }
  Result<int64_t> AddDeadLetter(const store::DeadLetter& letter) override {
    return inner_.AddDeadLetter(letter);
  }
  Result<std::vector<store::DeadLetter>> ListDeadLetters(int64_t after_id, int limit) override {
    return inner_.ListDeadLetters(after_id, limit);
  }
  Result<store::DeadLetter> GetDeadLetter(int64_t id) override { return inner_.GetDeadLetter(id); }
  Status DropDeadLetter(int64_t id) override { return inner_.DropDeadLetter(id); }
  Result<store::PurgeStats> Purge(const store::RetentionPolicy& policy) override {
    return inner_.Purge(policy);
  }
  Status CreateToken(const store::TokenRow& token, bool only_if_first) override {
    return inner_.CreateToken(token, only_if_first);
  }
  Result<store::TokenRow> FindToken(std::string_view hash) override {
    return inner_.FindToken(hash);
  }
  Result<std::vector<store::TokenRow>> ListTokens() override { return inner_.ListTokens(); }
  Status RevokeToken(std::string_view name, TimePoint at) override {
    return inner_.RevokeToken(name, at);
  }
  Result<int64_t> AddAudit(const store::AuditRow& row) override { return inner_.AddAudit(row); }
  Result<std::vector<store::AuditRow>> ListAudit(const store::AuditQuery& q) override {
    return inner_.ListAudit(q);
  }
  Result<store::LeaseRow> ClaimLease(const store::LeaseClaim& claim) override {
    return inner_.ClaimLease(claim);
  }
  Status ReleaseLease(std::string_view lease, std::string_view holder, int64_t epoch) override {
    return inner_.ReleaseLease(lease, holder, epoch);
  }
  Result<store::ClusterView> ReadCluster() override { return inner_.ReadCluster(); }
  store::StoreStats Stats() const override { return inner_.Stats(); }

  // Rows in the latency tables (tests).
  size_t tracked() const;

 private:
  using RowKey = std::pair<std::string, std::string>;  // (task_id, node_id)
  double SecondsSince(TimePoint start) const;
  void CountCreated(std::span<const store::NewTask> tasks,
                    const Result<std::vector<store::CreatedTask>>& r);
  // One committed change of a row (from -> to) at `now`.
  void RowMoved(const RowKey& row, std::optional<TaskState> from, TaskState to, store::Cause cause,
                TimePoint now);
  void ApplyDone(const std::vector<RowKey>& rows, TimePoint start,
                 const Result<store::ApplyResult>& r);

  store::StateStore& inner_;
  OrchestratorMetrics& metrics_;
  const Clock& clock_;

  mutable std::mutex mu_;
  std::map<RowKey, TimePoint> created_;     // not RUNNING yet; guarded by mu_
  std::map<RowKey, TimePoint> dispatched_;  // awaiting the ack; guarded by mu_
};

}  // namespace apollo::orchestrator
