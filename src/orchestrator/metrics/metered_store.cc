#include "orchestrator/metrics/metered_store.h"

#include <algorithm>

namespace apollo::orchestrator {

double MeteredStore::SecondsSince(TimePoint start) const {
  return std::max(0.0, std::chrono::duration<double>(clock_.Now() - start).count());
}

size_t MeteredStore::tracked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return created_.size() + dispatched_.size();
}

Result<std::vector<store::CreatedTask>> MeteredStore::CreateTasks(
    std::span<const store::NewTask> tasks) {
  TimePoint start = clock_.Now();
  auto r = inner_.CreateTasks(tasks);
  metrics_.StoreCall(StoreOp::kCreate, SecondsSince(start));
  CountCreated(tasks, r);
  return r;
}

Result<std::vector<store::CreatedTask>> MeteredStore::CreateTasksAudited(
    std::span<const store::NewTask> tasks, const store::AuditRow& audit) {
  TimePoint start = clock_.Now();
  auto r = inner_.CreateTasksAudited(tasks, audit);
  metrics_.StoreCall(StoreOp::kCreate, SecondsSince(start));
  CountCreated(tasks, r);
  return r;
}

void MeteredStore::CountCreated(std::span<const store::NewTask> tasks,
                                const Result<std::vector<store::CreatedTask>>& r) {
  if (!r.ok()) return;
  TimePoint now = clock_.Now();
  std::map<std::string, const store::NewTask*> by_id;
  for (const store::NewTask& t : tasks) by_id[t.spec.task_id] = &t;
  for (const store::CreatedTask& c : *r) {
    auto it = by_id.find(c.task_id);
    if (!c.created || it == by_id.end()) continue;
    for (const std::string& node : it->second->node_ids) {
      RowMoved({c.task_id, node}, std::nullopt, TaskState::kPending, store::Cause::kCreate, now);
    }
    // Rows created DISPATCHED (dispatch on create): a second history entry.
    for (const std::string& node : c.dispatched) {
      RowMoved({c.task_id, node}, TaskState::kPending, TaskState::kDispatched,
               store::Cause::kDispatch, now);
    }
  }
}

std::future<Result<store::ApplyResult>> MeteredStore::ApplyAsync(std::vector<Event> events) {
  metrics_.IngestBatch(events.size());
  std::vector<RowKey> rows;
  rows.reserve(events.size());
  for (const Event& e : events) rows.emplace_back(e.task_id, e.node_id);
  TimePoint start = clock_.Now();
  auto inner = inner_.ApplyAsync(std::move(events));
  return std::async(std::launch::deferred,
                    [this, inner = std::move(inner), rows = std::move(rows), start]() mutable {
                      Result<store::ApplyResult> r = inner.get();
                      ApplyDone(rows, start, r);
                      return r;
                    });
}

void MeteredStore::ApplyDone(const std::vector<RowKey>& rows, TimePoint start,
                             const Result<store::ApplyResult>& r) {
  metrics_.StoreCall(StoreOp::kApply, SecondsSince(start));
  if (!r.ok()) return;
  TimePoint now = clock_.Now();
  for (size_t i = 0; i < r->outcomes.size() && i < rows.size(); ++i) {
    const store::EventOutcome& o = r->outcomes[i];
    metrics_.IngestOutcome(o.outcome);
    if (o.outcome != store::Outcome::kApplied || !o.to || o.from == o.to) continue;
    RowMoved(rows[i], o.from, *o.to, store::Cause::kEvent, now);
  }
}

Result<std::vector<store::EventOutcome>> MeteredStore::Transition(
    std::span<const store::TransitionRequest> requests) {
  TimePoint start = clock_.Now();
  auto r = inner_.Transition(requests);
  metrics_.StoreCall(StoreOp::kTransition, SecondsSince(start));
  if (!r.ok()) return r;
  TimePoint now = clock_.Now();
  for (size_t i = 0; i < r->size() && i < requests.size(); ++i) {
    const store::EventOutcome& o = (*r)[i];
    if (o.outcome != store::Outcome::kApplied) continue;
    const store::TransitionRequest& q = requests[i];
    // A re-dispatch (no state change, a new attempt) restarts the ack clock.
    std::optional<TaskState> to = o.to ? o.to : q.to ? q.to : o.from;
    if (!to || (o.from == to && q.cause != store::Cause::kDispatch)) continue;
    RowMoved({q.task_id, q.node_id}, o.from, *to, q.cause, now);
  }
  return r;
}

Result<int> MeteredStore::RecordHeartbeats(std::span<const store::NodeHeartbeat> beats) {
  TimePoint start = clock_.Now();
  auto r = inner_.RecordHeartbeats(beats);
  metrics_.StoreCall(StoreOp::kHeartbeats, SecondsSince(start));
  return r;
}

void MeteredStore::RowMoved(const RowKey& row, std::optional<TaskState> from, TaskState to,
                            store::Cause cause, TimePoint now) {
  if (from != to) metrics_.Transition(from, to, cause);
  auto seconds = [now](TimePoint t) {
    return std::max(0.0, std::chrono::duration<double>(now - t).count());
  };
  std::lock_guard<std::mutex> lock(mu_);
  if (!from) {
    if (created_.size() < kMaxTracked) {
      created_.emplace(row, now);
    } else {
      metrics_.LatencyUntracked();
    }
  }
  if (cause == store::Cause::kDispatch) {
    // A dispatch, or a re-dispatch of a RETRYING row (a new attempt, no
    // state change): the ack clock (re)starts.
    if (dispatched_.size() < kMaxTracked || dispatched_.count(row)) {
      dispatched_[row] = now;
    } else {
      metrics_.LatencyUntracked();
    }
    return;
  }
  if (cause == store::Cause::kEvent) {
    // The agent's first event of an attempt moves the row on: its
    // acknowledgement (to RUNNING, or straight on when the run ended first).
    if (auto it = dispatched_.find(row); it != dispatched_.end()) {
      metrics_.DispatchToAck(seconds(it->second));
      dispatched_.erase(it);
    }
    // A run that finished before its ACCEPTED was stored walked through
    // RUNNING (the store's AgentReportPath): it ran too.
    if (auto it = created_.find(row); it != created_.end()) {
      if (to == TaskState::kRunning || to == TaskState::kSucceeded) {
        metrics_.SubmitToRunning(seconds(it->second));
        created_.erase(it);
      } else if (IsFinal(to) || IsFinalUnlessRetried(to)) {
        created_.erase(it);  // refused or failed before it ran
      }
    }
    return;
  }
  // Moved by the center (timeout, cancel, retry, ...): an ack no longer
  // comes for the dispatch; a row that ended never ran.
  if (to != TaskState::kDispatched) dispatched_.erase(row);
  if (IsFinal(to) || IsFinalUnlessRetried(to)) created_.erase(row);
}

}  // namespace apollo::orchestrator
