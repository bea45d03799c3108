#include "bus/applier.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace apollo::bus {
namespace {
constexpr size_t kKnownTasksMax = 200'000;
constexpr size_t kLoadedNodesMax = 10'000;
constexpr const char* kCarrierKey = "apollo_malformed";
}  // namespace

Event ToLetterEvent(const Event& e) {
  if (ValidateEvent(e).ok()) return e;
  nlohmann::json orig = {{"task_id", e.task_id},
                         {"node_id", e.node_id},
                         {"sequence_number", e.sequence_number},
                         {"attempt", e.attempt},
                         {"event_type", static_cast<int>(e.type)},
                         {"timestamp_us", ToUnixMicros(e.timestamp)},
                         {"payload", e.payload}};
  Event c = e;
  if (c.task_id.empty()) c.task_id = "-";
  if (c.node_id.empty()) c.node_id = "-";
  if (c.sequence_number == 0) c.sequence_number = 1;
  if (EventTypeName(c.type) == "UNKNOWN" || EventTypeName(c.type).empty()) {
    c.type = EventType::kProgress;
  }
  c.payload = nlohmann::json{{kCarrierKey, orig}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return c;
}

Event FromLetterEvent(const Event& e) {
  nlohmann::json j = nlohmann::json::parse(e.payload, nullptr, false);
  if (!j.is_object() || !j.contains(kCarrierKey) || !j[kCarrierKey].is_object()) return e;
  const nlohmann::json& o = j[kCarrierKey];
  Event out;
  out.task_id = o.value("task_id", "");
  out.node_id = o.value("node_id", "");
  out.sequence_number = o.value("sequence_number", uint64_t{0});
  out.attempt = o.value("attempt", uint32_t{0});
  out.type = static_cast<EventType>(o.value("event_type", 0));
  out.timestamp = FromUnixMicros(o.value("timestamp_us", int64_t{0}));
  out.payload = o.value("payload", "");
  return out;
}

Status DeadLetterBook::Load() {
  int64_t after = 0;
  for (;;) {
    auto page = store_.ListDeadLetters(after, 1000);
    if (!page.ok()) return page.status();
    std::lock_guard<std::mutex> lock(mu_);
    for (const store::DeadLetter& d : *page) {
      parked_ids_.insert(FromLetterEvent(d.event).event_id());
      after = std::max(after, d.id);
    }
    if (page->size() < 1000) return Status::Ok();
  }
}

Status DeadLetterBook::Park(const Event& e, const std::string& reason, int deliveries) {
  std::string id = e.event_id();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (parked_ids_.count(id)) return Status::Ok();
  }
  store::DeadLetter letter;
  letter.event = ToLetterEvent(e);
  letter.reason = reason;
  letter.deliveries = deliveries;
  Result<int64_t> r = store_.AddDeadLetter(letter);
  if (!r.ok()) return r.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    parked_ids_.insert(id);
    ++parked_count_;
  }
  if (sink_) sink_({"dead_letter", id, e.task_id, e.node_id, reason, deliveries});
  return Status::Ok();
}

void DeadLetterBook::Forget(const std::string& event_id) {
  std::lock_guard<std::mutex> lock(mu_);
  parked_ids_.erase(event_id);
}

uint64_t DeadLetterBook::parked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return parked_count_;
}

bool TaskDirectory::Known(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return known_.count(key) > 0;
}

void TaskDirectory::Add(std::vector<std::string> keys) {
  std::lock_guard<std::mutex> lock(mu_);
  if (known_.size() + keys.size() > kKnownTasksMax) known_.clear();
  for (std::string& k : keys) known_.insert(std::move(k));
}

void TaskDirectory::AddRows(const std::vector<std::pair<std::string, std::string>>& task_node) {
  std::vector<std::string> keys;
  keys.reserve(task_node.size());
  for (const auto& [task_id, node_id] : task_node) keys.push_back(task_id + '\0' + node_id);
  Add(std::move(keys));
}

Result<bool> TaskDirectory::Exists(const std::string& task_id, const std::string& node_id) {
  const std::string key = task_id + '\0' + node_id;
  if (Known(key)) return true;
  bool load = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto now = std::chrono::steady_clock::now();
    auto it = loaded_.find(node_id);
    if (it == loaded_.end() || now - it->second > std::chrono::seconds(1)) {
      // An entry only matters for a second: past a bound (node ids come
      // from peers) the stale ones go.
      if (it == loaded_.end() && loaded_.size() >= kLoadedNodesMax) {
        std::erase_if(loaded_,
                      [&](const auto& kv) { return now - kv.second > std::chrono::seconds(1); });
      }
      loaded_[node_id] = now;
      load = true;
    }
  }
  if (load) {
    Result<std::vector<store::NodeRow>> rows = store_.ListNodeTasks(node_id, 5000);
    if (!rows.ok()) return rows.status();
    std::vector<std::string> keys;
    for (const store::NodeRow& r : *rows) keys.push_back(r.task_id + '\0' + r.node_id);
    Add(std::move(keys));
    if (Known(key)) return true;
  }
  Result<store::TaskRow> t = store_.GetTask(task_id);
  if (!t.ok()) {
    if (t.status().code() == StatusCode::kNotFound) return false;
    return t.status();
  }
  std::vector<std::string> keys;
  for (const store::NodeRow& n : t->nodes) keys.push_back(task_id + '\0' + n.node_id);
  Add(std::move(keys));
  return Known(key);
}

Result<std::string> CheckEvent(TaskDirectory& tasks, const Event& e) {
  if (Status v = ValidateEvent(e); !v.ok()) return "malformed: " + v.message();
  Result<bool> known = tasks.Exists(e.task_id, e.node_id);
  if (!known.ok()) return known.status();
  if (!*known) return "unknown task " + e.task_id + " on node " + e.node_id;
  return std::string();
}

Settled BatchApplier::Poison(const Delivery& d, const std::string& reason) {
  if (d.deliveries < max_deliver_) return {Disposition::kRetry, 0, {}, reason};
  Status s = book_.Park(d.event, reason, d.deliveries);
  if (!s.ok()) {
    Settled retry{Disposition::kRetry, 0, {}, "cannot park: " + s.message()};
    retry.transient = s.code() == StatusCode::kUnavailable;
    return retry;
  }
  return {Disposition::kDeadLettered, 0, {}, reason};
}

Settled BatchApplier::StoreError(const Delivery& d, const Status& s) {
  if (s.code() == StatusCode::kUnavailable) {
    return {Disposition::kRetry, 0, {}, "store unavailable: " + s.message(), true};
  }
  return Poison(d, "store error: " + s.message());
}

PendingApply BatchApplier::Begin(const std::vector<Delivery>& batch) {
  PendingApply p;
  p.out.resize(batch.size());
  std::vector<size_t> healthy;
  healthy.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    Result<std::string> why = CheckEvent(tasks_, batch[i].event);
    if (!why.ok()) {
      p.out[i] = StoreError(batch[i], why.status());
    } else if (!why->empty()) {
      p.out[i] = Poison(batch[i], *why);
    } else {
      healthy.push_back(i);
    }
  }
  if (healthy.empty()) return p;
  // In each node's sequence order: the agent's own order, so each task's
  // events keep theirs (a partition's are already in it, bar redeliveries),
  // and the store advances a node's mark instead of recording every event
  // of an op that interleaves partitions as out of order (BENCHMARKS.md,
  // "Event bus", 17:00 UTC).
  std::stable_sort(healthy.begin(), healthy.end(), [&](size_t a, size_t b) {
    const Event& x = batch[a].event;
    const Event& y = batch[b].event;
    if (int c = x.node_id.compare(y.node_id); c != 0) return c < 0;
    return x.sequence_number < y.sequence_number;
  });
  bool exhausted = std::any_of(healthy.begin(), healthy.end(), [&](size_t i) {
    return batch[i].deliveries >= max_deliver_;
  });
  if (exhausted && healthy.size() > 1) {
    // Past max_deliver. Most often these are events that waited out a store
    // outage (its retries count as deliveries, though they never park), so
    // the batch is tried whole first: after a long outage every event is
    // past max_deliver, and one commit each would slow the catch-up. Only a
    // commit that fails for another reason is split, one event at a time,
    // so only the culprit is parked.
    Result<store::ApplyResult> whole = Submit(batch, healthy).get();
    if (whole.ok() || whole.status().code() == StatusCode::kUnavailable) {
      SettleOp(batch, healthy, whole, p.out);
    } else {
      ApplyOneByOne(batch, healthy, p.out);
    }
    return p;
  }
  p.op = Submit(batch, healthy);
  p.healthy = std::move(healthy);
  return p;
}

std::vector<Settled> BatchApplier::Finish(const std::vector<Delivery>& batch, PendingApply p) {
  if (p.op.valid()) SettleOp(batch, p.healthy, p.op.get(), p.out);
  return std::move(p.out);
}

std::future<Result<store::ApplyResult>> BatchApplier::Submit(const std::vector<Delivery>& batch,
                                                             const std::vector<size_t>& idx) {
  std::vector<Event> events;
  events.reserve(idx.size());
  for (size_t i : idx) events.push_back(batch[i].event);
  return store_.ApplyAsync(std::move(events));
}

void BatchApplier::ApplyHealthy(const std::vector<Delivery>& batch,
                                const std::vector<size_t>& idx, std::vector<Settled>& out) {
  SettleOp(batch, idx, Submit(batch, idx).get(), out);
}

void BatchApplier::SettleOp(const std::vector<Delivery>& batch, const std::vector<size_t>& idx,
                            const Result<store::ApplyResult>& r, std::vector<Settled>& out) {
  for (size_t k = 0; k < idx.size(); ++k) {
    size_t i = idx[k];
    if (!r.ok()) {
      out[i] = StoreError(batch[i], r.status());
      continue;
    }
    auto it = r->acked_seq.find(batch[i].event.node_id);
    out[i] = {Disposition::kCommitted, it == r->acked_seq.end() ? 0 : it->second,
              k < r->outcomes.size() ? r->outcomes[k].outcome : store::Outcome::kApplied, ""};
  }
}

void BatchApplier::ApplyOneByOne(const std::vector<Delivery>& batch,
                                 const std::vector<size_t>& idx, std::vector<Settled>& out) {
  for (size_t i : idx) ApplyHealthy(batch, {i}, out);
}

}  // namespace apollo::bus
