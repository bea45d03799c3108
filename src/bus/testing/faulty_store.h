#pragma once

// FaultyStore: a real StateStore with faults on its write path, for bus tests
// that need a store commit to fail or to stay in flight. Everything else is
// passed through unchanged.
//  - fail_next_applies(n, code): the next n ApplyAsync calls fail (with
//    `code`, kUnavailable unless told) without reaching the store, as a
//    commit that rolled back.
//  - hold_applies(): ApplyAsync results are withheld (the inner store has
//    committed them) until release_applies(); the futures are deferred, so
//    the waiter's get() blocks until then.
// Counts every ApplyAsync call and its size.
//
// Thread-safety: thread-safe.

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include "store/state_store.h"

namespace apollo::bus::testing {

class FaultyStore final : public store::StateStore {
 public:
  explicit FaultyStore(store::StateStore& inner) : inner_(inner) { release_applies(); }

  void fail_next_applies(int n, StatusCode code = StatusCode::kUnavailable) {
    fail_code_ = code;
    fail_ = n;
  }
  void hold_applies() {
    std::lock_guard<std::mutex> lock(mu_);
    gate_ = std::make_shared<std::promise<void>>();
    gate_future_ = gate_->get_future().share();
  }
  void release_applies() {
    std::lock_guard<std::mutex> lock(mu_);
    if (gate_) gate_->set_value();
    gate_.reset();
    if (!gate_future_.valid()) {
      std::promise<void> open;
      open.set_value();
      gate_future_ = open.get_future().share();
    }
  }
  // Sizes of the ApplyAsync calls so far, in call order.
  std::vector<size_t> applies() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }
  int failed() const { return failed_; }

  void SetCommitListener(store::CommitListener listener) override {
    inner_.SetCommitListener(std::move(listener));
  }
  std::future<Result<store::ApplyResult>> ApplyAsync(std::vector<Event> events) override {
    std::shared_future<void> gate;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sizes_.push_back(events.size());
      gate = gate_future_;
    }
    if (fail_.fetch_sub(1) > 0) {
      ++failed_;
      std::promise<Result<store::ApplyResult>> p;
      p.set_value(Status(fail_code_.load(), "injected store failure"));
      return p.get_future();
    }
    fail_ = 0;
    auto inner = std::make_shared<std::future<Result<store::ApplyResult>>>(
        inner_.ApplyAsync(std::move(events)));
    return std::async(std::launch::deferred, [inner, gate] {
      gate.wait();
      return inner->get();
    });
  }

  Result<std::vector<store::CreatedTask>> CreateTasks(
      std::span<const store::NewTask> tasks) override {
    return inner_.CreateTasks(tasks);
  }
  Result<std::vector<store::CreatedTask>> CreateTasksAudited(
      std::span<const store::NewTask> tasks, const store::AuditRow& audit) override {
    return inner_.CreateTasksAudited(tasks, audit);
  }
  Result<std::vector<store::EventOutcome>> Transition(
      std::span<const store::TransitionRequest> requests) override {
    return inner_.Transition(requests);
  }
  Result<store::TaskRow> GetTask(std::string_view task_id) override {
    return inner_.GetTask(task_id);
  }
  Result<store::TaskPage> ListTasks(const store::TaskQuery& query) override {
    return inner_.ListTasks(query);
  }
  Result<std::vector<store::NodeRow>> ListNodeTasks(std::string_view node_id,
                                                    int limit) override {
    return inner_.ListNodeTasks(node_id, limit);
  }
  Result<std::vector<store::HistoryRow>> GetHistory(std::string_view task_id) override {
    return inner_.GetHistory(task_id);
  }
  Result<std::vector<store::DueItem>> DueWork(TimePoint now, int limit) override {
    return inner_.DueWork(now, limit);
  }
  Result<uint64_t> HighestStoredSeq(std::string_view node_id) override {
    return inner_.HighestStoredSeq(node_id);
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
  Status RecordHeartbeat(std::string_view node_id, TimePoint at,
                         std::string_view mode) override {
    return inner_.RecordHeartbeat(node_id, at, mode);
  }
  Result<int> RecordHeartbeats(std::span<const store::NodeHeartbeat> beats) override {
    return inner_.RecordHeartbeats(beats);
  }
  Result<std::vector<store::NodeInfo>> ListNodes() override { return inner_.ListNodes(); }
  Result<std::vector<std::string>> ResolveSelector(const TargetSelector& sel) override {
    return inner_.ResolveSelector(sel);
  }
  Result<std::vector<store::AlertRow>> ListAlerts(int64_t after_id, int limit) override {
    return inner_.ListAlerts(after_id, limit);
  }
  Result<int64_t> AddAlert(const store::AlertRow& alert) override {
    return inner_.AddAlert(alert);
  }
  Result<int64_t> AddDeadLetter(const store::DeadLetter& letter) override {
    return inner_.AddDeadLetter(letter);
  }
  Result<std::vector<store::DeadLetter>> ListDeadLetters(int64_t after_id, int limit) override {
    return inner_.ListDeadLetters(after_id, limit);
  }
  Result<store::DeadLetter> GetDeadLetter(int64_t id) override {
    return inner_.GetDeadLetter(id);
  }
  Status DropDeadLetter(int64_t id) override { return inner_.DropDeadLetter(id); }
  Result<store::PurgeStats> Purge(const store::RetentionPolicy& policy) override {
    return inner_.Purge(policy);
  }
  Result<std::vector<store::AlertRow>> DueAlertDeliveries(TimePoint now, int limit) override {
    return inner_.DueAlertDeliveries(now, limit);
  }
  Status SetAlertDelivery(int64_t id, store::AlertDelivery delivery, int attempts,
                          std::string_view detail,
                          std::optional<TimePoint> next_delivery_at) override {
    return inner_.SetAlertDelivery(id, delivery, attempts, detail, next_delivery_at);
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
  Result<std::vector<store::AuditRow>> ListAudit(const store::AuditQuery& query) override {
    return inner_.ListAudit(query);
  }
  Result<store::LeaseRow> ClaimLease(const store::LeaseClaim& claim) override {
    return inner_.ClaimLease(claim);
  }
  Status ReleaseLease(std::string_view lease, std::string_view holder, int64_t epoch) override {
    return inner_.ReleaseLease(lease, holder, epoch);
  }
  Result<store::ClusterView> ReadCluster() override { return inner_.ReadCluster(); }
  store::StoreStats Stats() const override { return inner_.Stats(); }

 private:
  store::StateStore& inner_;
  std::atomic<int> fail_{0};
  std::atomic<StatusCode> fail_code_{StatusCode::kUnavailable};
  std::atomic<int> failed_{0};
  mutable std::mutex mu_;
  std::vector<size_t> sizes_;                         // guarded by mu_
  std::shared_ptr<std::promise<void>> gate_;          // guarded by mu_
  std::shared_future<void> gate_future_;              // guarded by mu_
};

}  // namespace apollo::bus::testing
