#include "bus/embedded/embedded_bus.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "bus/applier.h"
#include "bus/dead_letters.h"
#include "bus/settle_tracker.h"

namespace apollo::bus {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

struct Item {
  Delivery delivery;
  TimePoint enqueued_at{};
  SteadyTime not_before{};
};

// One partition: a FIFO of events (the partition path). Its worker applies
// them in order. Events on the direct path (see Publish) are counted here too.
struct Partition {
  std::mutex mu;
  std::deque<Item> queue;                    // guarded by mu
  std::unordered_set<std::string> inflight;  // event ids queued, applying or direct; mu
  std::optional<TimePoint> applying_since;   // oldest of the batch applying; mu
  size_t applying = 0;                       // partition-path events applying; mu
  // Enqueue times of this partition's events in direct ops not yet
  // completed, oldest first (direct ops complete in submission order). mu
  std::deque<TimePoint> direct;
  uint64_t published = 0;                    // guarded by mu
  uint64_t applied = 0;                      // guarded by mu
  uint64_t dead = 0;                         // guarded by mu
};

// A consumer thread serving partitions w, w + kWorkers, ...: each round it
// takes the ready events of all its partitions and applies them as ONE store
// batch (order inside each partition kept; a task lives in one partition),
// so the store sees few large applies instead of one small apply per
// partition per publish.
struct Worker {
  Worker(store::StateStore& store, DeadLetterBook& book, TaskDirectory& tasks, int max_deliver)
      : applier(store, book, tasks, max_deliver) {}
  std::mutex mu;
  std::condition_variable cv;
  bool signaled = false;  // guarded by mu: a publish arrived
  BatchApplier applier;   // this worker's thread only
  std::vector<Partition*> parts;
  std::thread thread;
};

constexpr int kMaxWorkers = 4;

// One direct store op: a publish's healthy events of clean partitions.
struct DirectOp {
  std::future<Result<store::ApplyResult>> result;
  std::vector<Item> items;      // submission order
  std::vector<size_t> parts;    // partition of each item
};

class EmbeddedBus final : public EventBus {
 public:
  EmbeddedBus(const BusOptions& options, store::StateStore& store, const Clock& clock)
      : options_(options), store_(store), clock_(clock), book_(store, options.on_alert),
        tasks_(store), tracker_(clock) {
    const int n = std::max(1, options_.partitions);
    for (int p = 0; p < n; ++p) parts_.push_back(std::make_unique<Partition>());
    for (int w = 0; w < std::min(n, kMaxWorkers); ++w) {
      workers_.push_back(std::make_unique<Worker>(store, book_, tasks_, options_.max_deliver));
    }
    for (int p = 0; p < n; ++p) workers_[p % workers_.size()]->parts.push_back(parts_[p].get());
  }
  ~EmbeddedBus() override { Stop(); }

  // EventBus
  Status Start() override;
  // Its consumers are this process's own and start with it (an orchestrator
  // replica opens it with consume = true: only its own sessions publish).
  Status StartConsumers() override {
    return options_.consume ? Status::Ok()
                            : Status::FailedPrecondition(
                                  "the embedded bus starts its consumers with Start (consume)");
  }
  void Stop() override;
  std::future<Result<PublishAck>> Publish(std::string node_id, std::vector<Event> events) override;
  Result<std::vector<PartitionLag>> Lag() override;
  Status ReplayDeadLetter(int64_t id) override { return ReplayLetter(store_, book_, id); }
  Result<int> ReplayAllDeadLetters() override { return ReplayAllLetters(store_, book_); }
  Status DropDeadLetter(int64_t id) override { return DropLetter(store_, book_, id); }
  std::string Name() const override { return "embedded"; }
  void RowsStored(const std::vector<std::pair<std::string, std::string>>& task_node) override {
    tasks_.AddRows(task_node);
  }

 private:
  void Consume(Worker& w);
  // Takes up to batch_max ready items off the queue; empty if none ready.
  std::vector<Item> TakeReady(Partition& p, SteadyTime now);
  void Signal(size_t partition);
  void Settle(Partition& p, std::vector<Item>& batch, const std::vector<Settled>& settled);
  // The direct path's completion thread: waits for the ops in FIFO order.
  void Complete();
  void SettleDirect(DirectOp& op);

  const BusOptions options_;
  store::StateStore& store_;
  const Clock& clock_;
  DeadLetterBook book_;
  TaskDirectory tasks_;
  SettleTracker tracker_;
  std::vector<std::unique_ptr<Partition>> parts_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // Held by Publish while it routes events and submits its direct op, so
  // direct ops reach the store (and done_) in the order of these decisions.
  std::mutex run_mu_;
  bool running_ = false;              // guarded by run_mu_
  std::atomic<bool> stop_{false};
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  std::deque<DirectOp> done_;         // guarded by done_mu_: ops to wait for
  bool done_stop_ = false;            // guarded by done_mu_
  std::thread completer_;
};

Status EmbeddedBus::Start() {
  std::lock_guard<std::mutex> lock(run_mu_);
  if (running_) return Status::Ok();
  APOLLO_RETURN_IF_ERROR(book_.Load());
  stop_ = false;
  if (options_.consume) {
    for (auto& w : workers_) w->thread = std::thread([this, &w] { Consume(*w); });
    {
      std::lock_guard<std::mutex> done_lock(done_mu_);
      done_stop_ = false;
    }
    completer_ = std::thread([this] { Complete(); });
  }
  running_ = true;
  return Status::Ok();
}

void EmbeddedBus::Stop() {
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    if (!running_) return;
    running_ = false;
    stop_ = true;
  }
  // The completer first: it drains the direct ops already submitted (the
  // store finishes them); retries it queues are dropped below with the rest.
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    done_stop_ = true;
  }
  done_cv_.notify_all();
  if (completer_.joinable()) completer_.join();
  for (auto& w : workers_) {
    { std::lock_guard<std::mutex> lock(w->mu); }
    w->cv.notify_all();
    if (w->thread.joinable()) w->thread.join();
  }
  for (auto& p : parts_) {
    std::lock_guard<std::mutex> lock(p->mu);
    p->queue.clear();
    p->inflight.clear();
    p->direct.clear();
    p->applying = 0;
    p->applying_since.reset();
  }
  tracker_.FailAll(Status::Unavailable("event bus stopped"));
}

std::future<Result<PublishAck>> EmbeddedBus::Publish(std::string node_id,
                                                     std::vector<Event> events) {
  auto fail = [](Status s) {
    std::promise<Result<PublishAck>> p;
    p.set_value(std::move(s));
    return p.get_future();
  };
  for (const Event& e : events) {
    if (e.node_id != node_id) return fail(Status::InvalidArgument("event of another node"));
  }
  // The poison check, outside any lock (it may read the store): only events
  // that pass it may take the direct path. Without consumers (consume =
  // false) nothing is applied here either.
  std::vector<bool> healthy(events.size(), false);
  if (options_.consume) {
    for (size_t i = 0; i < events.size(); ++i) {
      Result<std::string> why = CheckEvent(tasks_, events[i]);
      healthy[i] = why.ok() && why->empty();
    }
  }
  std::lock_guard<std::mutex> run_lock(run_mu_);
  if (!running_) return fail(Status::Unavailable("event bus not running"));
  std::vector<uint64_t> seqs;
  for (const Event& e : events) seqs.push_back(e.sequence_number);
  auto future = tracker_.Register(node_id, seqs, options_.commit_timeout);
  TimePoint now = clock_.Now();
  // Route per partition. A partition with nothing on the partition path
  // (queued, retrying, applying) sends its healthy events straight to the
  // store, all of them in this publish's ONE op (the store's group commit
  // merges concurrent publishes as for any caller); its suspect events, and
  // every event of a partition with something pending, take the partition
  // path. Routing and submission happen under run_mu_, so direct ops reach
  // the store in the order of these decisions, and the store applies ops in
  // submission order. The resulting ordering guarantee (and its two
  // exceptions) is in src/bus/README.md "Embedded: the direct path".
  std::vector<int> route(parts_.size(), -1);  // -1 undecided, 0 partition path, 1 direct
  std::vector<bool> touched(workers_.size());
  DirectOp op;
  std::vector<Event> direct_events;
  for (size_t i = 0; i < events.size(); ++i) {
    Event& e = events[i];
    size_t index = static_cast<size_t>(PartitionOf(e.task_id, static_cast<int>(parts_.size())));
    Partition& p = *parts_[index];
    std::lock_guard<std::mutex> lock(p.mu);
    if (route[index] < 0) route[index] = (p.queue.empty() && p.applying == 0) ? 1 : 0;
    if (!p.inflight.insert(e.event_id()).second) continue;  // already on its way
    // Before any op can take it: whichever op applies it reports it.
    tracker_.Carry(node_id, e.sequence_number);
    ++p.published;
    if (route[index] == 1 && healthy[i]) {
      p.direct.push_back(now);
      direct_events.push_back(e);
      op.items.push_back(Item{Delivery{std::move(e), 1}, now, SteadyTime{}});
      op.parts.push_back(index);
      continue;
    }
    p.queue.push_back(Item{Delivery{std::move(e), 1}, now, SteadyTime{}});
    touched[index % workers_.size()] = true;
  }
  if (!direct_events.empty()) {
    op.result = store_.ApplyAsync(std::move(direct_events));
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      done_.push_back(std::move(op));
    }
    done_cv_.notify_one();
  }
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (touched[w]) Signal(w);
  }
  return future;
}

void EmbeddedBus::Complete() {
  for (;;) {
    DirectOp op;
    {
      std::unique_lock<std::mutex> lock(done_mu_);
      done_cv_.wait(lock, [&] { return done_stop_ || !done_.empty(); });
      if (done_.empty()) return;  // stopping, and every submitted op settled
      op = std::move(done_.front());
      done_.pop_front();
    }
    SettleDirect(op);
  }
}

void EmbeddedBus::SettleDirect(DirectOp& op) {
  Result<store::ApplyResult> r = op.result.get();
  if (!r.ok()) {
    // A failed op: its events enter the partition path as second deliveries,
    // ready at once, in their order, ahead of what their partitions queued
    // since (published later), so the worker takes them first. A further
    // failure there gets the usual doubling delay and, at max_deliver, the
    // dead-letter path.
    std::vector<std::vector<Item>> retry(parts_.size());
    for (size_t k = 0; k < op.items.size(); ++k) {
      Item& it = op.items[k];
      it.delivery.deliveries = 2;
      it.not_before = SteadyTime{};
      retry[op.parts[k]].push_back(std::move(it));
    }
    std::vector<bool> touched(workers_.size());
    for (size_t index = 0; index < parts_.size(); ++index) {
      if (retry[index].empty()) continue;
      Partition& p = *parts_[index];
      std::lock_guard<std::mutex> lock(p.mu);
      for (size_t k = 0; k < retry[index].size() && !p.direct.empty(); ++k) p.direct.pop_front();
      for (auto it = retry[index].rbegin(); it != retry[index].rend(); ++it) {
        p.queue.push_front(std::move(*it));
      }
      touched[index % workers_.size()] = true;
    }
    for (size_t w = 0; w < workers_.size(); ++w) {
      if (touched[w]) Signal(w);
    }
    return;
  }
  for (size_t k = 0; k < op.items.size(); ++k) {
    Partition& p = *parts_[op.parts[k]];
    std::lock_guard<std::mutex> lock(p.mu);
    p.inflight.erase(op.items[k].delivery.event.event_id());
    if (!p.direct.empty()) p.direct.pop_front();
    ++p.applied;
  }
  std::vector<SettleTracker::Commit> commits;
  commits.reserve(op.items.size());
  for (size_t k = 0; k < op.items.size(); ++k) {
    const Event& e = op.items[k].delivery.event;
    auto it = r->acked_seq.find(e.node_id);
    commits.push_back({e.node_id, e.sequence_number,
                       it == r->acked_seq.end() ? 0 : it->second,
                       k < r->outcomes.size() ? r->outcomes[k].outcome
                                              : store::Outcome::kApplied});
  }
  tracker_.CommittedAll(commits);
}

void EmbeddedBus::Signal(size_t worker) {
  Worker& w = *workers_[worker];
  {
    std::lock_guard<std::mutex> lock(w.mu);
    w.signaled = true;
  }
  w.cv.notify_one();
}

std::vector<Item> EmbeddedBus::TakeReady(Partition& p, SteadyTime now) {
  std::vector<Item> batch;
  for (auto it = p.queue.begin(); it != p.queue.end() &&
                                  batch.size() < static_cast<size_t>(options_.batch_max);) {
    if (it->not_before <= now) {
      batch.push_back(std::move(*it));
      it = p.queue.erase(it);
    } else {
      ++it;
    }
  }
  return batch;
}

void EmbeddedBus::Consume(Worker& w) {
  while (!stop_) {
    // The timeout picks up retries whose delay has passed and expires
    // waiters; with neither pending, a publish wakes the worker, and an idle
    // center (a quiet fleet) is not woken 50 times a second per worker.
    bool pending = tracker_.waiting() > 0;
    for (size_t i = 0; i < w.parts.size() && !pending; ++i) {
      std::lock_guard<std::mutex> lock(w.parts[i]->mu);
      pending = !w.parts[i]->queue.empty();
    }
    {
      std::unique_lock<std::mutex> lock(w.mu);
      w.cv.wait_for(lock, std::chrono::milliseconds(pending ? 20 : 250),
                    [&] { return stop_ || w.signaled; });
      if (stop_) return;
      w.signaled = false;
    }
    tracker_.Expire();
    // Ready events of every partition of this worker, one slice each.
    std::vector<std::vector<Item>> slices(w.parts.size());
    std::vector<Delivery> deliveries;
    SteadyTime now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < w.parts.size(); ++i) {
      Partition& p = *w.parts[i];
      std::lock_guard<std::mutex> lock(p.mu);
      slices[i] = TakeReady(p, now);
      p.applying = slices[i].size();
      if (!slices[i].empty()) p.applying_since = slices[i].front().enqueued_at;
      for (const Item& it : slices[i]) deliveries.push_back(it.delivery);
    }
    if (deliveries.empty()) continue;
    std::vector<Settled> settled = w.applier.Apply(deliveries);
    size_t at = 0;
    for (size_t i = 0; i < w.parts.size(); ++i) {
      if (slices[i].empty()) continue;
      std::vector<Settled> mine(settled.begin() + static_cast<std::ptrdiff_t>(at),
                                settled.begin() + static_cast<std::ptrdiff_t>(at + slices[i].size()));
      at += slices[i].size();
      Settle(*w.parts[i], slices[i], mine);
    }
    // More may be ready already (a backlog larger than batch_max).
    std::lock_guard<std::mutex> lock(w.mu);
    w.signaled = true;
  }
}

void EmbeddedBus::Settle(Partition& p, std::vector<Item>& batch,
                         const std::vector<Settled>& settled) {
  std::vector<Item> retry;
  {
    std::lock_guard<std::mutex> lock(p.mu);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (settled[i].disposition == Disposition::kRetry) {
        Item& it = batch[i];
        int shift = RetryShift(it.delivery.deliveries, settled[i].transient);
        it.not_before = std::chrono::steady_clock::now() + options_.redeliver_delay * (1 << shift);
        ++it.delivery.deliveries;
        retry.push_back(std::move(it));
        continue;
      }
      p.inflight.erase(batch[i].delivery.event.event_id());
      ++p.applied;
      if (settled[i].disposition == Disposition::kDeadLettered) ++p.dead;
    }
    // Retries go back to the front, in their order: the oldest stay first.
    for (auto it = retry.rbegin(); it != retry.rend(); ++it) p.queue.push_front(std::move(*it));
    p.applying_since.reset();
    p.applying = 0;
  }
  ReportSettled(tracker_, settled,
                [&](size_t i) -> const Event& { return batch[i].delivery.event; });
}

Result<std::vector<PartitionLag>> EmbeddedBus::Lag() {
  std::vector<PartitionLag> out;
  TimePoint now = clock_.Now();
  for (size_t i = 0; i < parts_.size(); ++i) {
    Partition& p = *parts_[i];
    std::lock_guard<std::mutex> lock(p.mu);
    PartitionLag l;
    l.partition = static_cast<int>(i);
    l.published = p.published;
    l.applied = p.applied;
    l.pending = p.published - p.applied;
    l.dead_lettered = p.dead;
    std::optional<TimePoint> oldest = p.applying_since;
    if (!p.direct.empty() && (!oldest || p.direct.front() < *oldest)) oldest = p.direct.front();
    for (const Item& it : p.queue) {
      if (!oldest || it.enqueued_at < *oldest) oldest = it.enqueued_at;
    }
    if (oldest) l.oldest_unapplied_age = now - *oldest;
    out.push_back(l);
  }
  return out;
}

}  // namespace

std::unique_ptr<EventBus> NewEmbeddedBus(const BusOptions& options, store::StateStore& store,
                                         const Clock& clock) {
  return std::make_unique<EmbeddedBus>(options, store, clock);
}

}  // namespace apollo::bus
