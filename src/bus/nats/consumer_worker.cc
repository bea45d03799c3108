#include "bus/nats/consumer_worker.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace apollo::bus::nats {
namespace {

// A fetcher's long-poll: returns at once when messages wait, otherwise
// after the first arrives or this long.
constexpr int64_t kFetchWaitMs = 100;
// The apply thread's wait for a hand-over (then it expires waiters).
constexpr auto kApplyIdle = std::chrono::milliseconds(100);
// Store ops submitted and not yet settled. Two keep the store's writer busy
// (one committing, one queued); more only cut the queued work into more ops.
constexpr size_t kOpsInFlight = 2;
// Fetches a partition may hand over before the apply thread takes them. The
// fetcher long-polls again at once instead of waiting for the take, so the
// server has a pull request to deliver to while the apply thread is busy.
constexpr size_t kHandOversMax = 4;

// Events a message says it carries (kEventsHeader; none: one).
size_t EventsIn(natsMsg* m) {
  const char* v = nullptr;
  if (natsMsgHeader_Get(m, kEventsHeader, &v) != NATS_OK || !v) return 1;
  return std::max<size_t>(1, std::strtoull(v, nullptr, 10));
}
}  // namespace

ConsumerWorker::ConsumerWorker(std::vector<PartitionConsumer*> parts, const BusOptions& options,
                               store::StateStore& store, DeadLetterBook& book,
                               TaskDirectory& tasks, SettleTracker& tracker,
                               const std::atomic<bool>& stop)
    : parts_(std::move(parts)), options_(options), tracker_(tracker),
      applier_(store, book, tasks, options.max_deliver), stop_(stop) {}

void ConsumerWorker::Start() {
  handed_.assign(parts_.size(), {});
  for (size_t i = 0; i < parts_.size(); ++i) fetchers_.emplace_back([this, i] { FetchLoop(i); });
  applier_thread_ = std::thread([this] { ApplyLoop(); });
  completer_thread_ = std::thread([this] { CompleteLoop(); });
}

void ConsumerWorker::Join() {
  cv_.notify_all();
  for (std::thread& t : fetchers_) {
    if (t.joinable()) t.join();
  }
  fetchers_.clear();
  if (applier_thread_.joinable()) applier_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    applying_done_ = true;
  }
  op_cv_.notify_all();
  // Settles what was submitted (the store completes every op it took).
  if (completer_thread_.joinable()) completer_thread_.join();
  // Handed over, never applied: unacknowledged, so redelivered after ack_wait.
  for (std::deque<natsMsgList>& q : handed_) {
    for (natsMsgList& l : q) natsMsgList_Destroy(&l);
    q.clear();
  }
  for (PartitionConsumer* p : parts_) p->Reset();
}

void ConsumerWorker::FetchLoop(size_t i) {
  PartitionConsumer* part = parts_[i];
  while (!stop_) {
    {
      // At most kHandOversMax waiting hand-overs per partition.
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, kApplyIdle,
                   [&] { return stop_ || handed_[i].size() < kHandOversMax; });
      if (stop_) return;
      if (handed_[i].size() >= kHandOversMax) continue;
    }
    natsMsgList list{};
    PartitionConsumer::Polled r = part->Poll(kFetchWaitMs, &list);
    if (r == PartitionConsumer::Polled::kMessages) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        handed_[i].push_back(list);
      }
      cv_.notify_all();
      continue;
    }
    natsMsgList_Destroy(&list);
    if (r == PartitionConsumer::Polled::kError) {
      // Disconnected or the consumer is gone: back off.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } else if (r == PartitionConsumer::Polled::kNotReady) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

void ConsumerWorker::ApplyLoop() {
  while (!stop_) {
    tracker_.Expire();
    std::vector<Fetched> taken;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, kApplyIdle, [&] {
        return stop_ || std::any_of(handed_.begin(), handed_.end(),
                                    [](const auto& q) { return !q.empty(); });
      });
      if (stop_) return;
      for (size_t i = 0; i < handed_.size(); ++i) {
        for (natsMsgList& l : handed_[i]) taken.push_back(Fetched{parts_[i], l});
        handed_[i].clear();
      }
    }
    if (taken.empty()) continue;
    cv_.notify_all();  // the fetchers may fetch the next while this applies
    Apply(taken);
  }
}

void ConsumerWorker::Apply(std::vector<Fetched>& fetched) {
  // Store ops of at most batch_max events per owned partition, split at
  // message boundaries; a partition's messages stay in fetch order across
  // ops (the store commits ops in submission order).
  const size_t op_max = static_cast<size_t>(std::max(1, options_.batch_max)) * parts_.size();
  std::vector<Delivery> batch;
  Held held;
  size_t events = 0;
  for (Fetched& f : fetched) {
    for (int i = 0; i < f.list.Count; ++i) {
      natsMsg* m = f.list.Msgs[i];
      size_t n = EventsIn(m);
      if (events > 0 && events + n > op_max) {
        Submit(batch, held, {});
        events = 0;
      }
      if (held.empty() || held.back().first != f.part) {
        held.emplace_back(f.part, std::vector<HeldMsg>{});
      }
      f.part->Collect(&m, 1, batch, held.back().second);
      events += n;
    }
  }
  // The messages live until the last op that holds any of them is settled;
  // ops are settled in submission order.
  std::vector<natsMsgList> lists;
  for (Fetched& f : fetched) lists.push_back(f.list);
  Submit(batch, held, std::move(lists));
}

void ConsumerWorker::Submit(std::vector<Delivery>& batch, Held& held,
                            std::vector<natsMsgList> lists) {
  if (batch.empty() && lists.empty()) return;
  {
    // Not abandoned at stop: the completion thread settles what is in
    // flight, so there is always room again.
    std::unique_lock<std::mutex> lock(mu_);
    op_cv_.wait(lock, [&] { return in_flight_ < kOpsInFlight; });
    ++in_flight_;
  }
  Op op;
  op.batch = std::move(batch);
  op.held = std::move(held);
  op.lists = std::move(lists);
  if (!op.batch.empty()) op.pending = applier_.Begin(op.batch);
  {
    std::lock_guard<std::mutex> lock(mu_);
    submitted_.push_back(std::move(op));
  }
  op_cv_.notify_all();
  batch.clear();
  held.clear();
}

void ConsumerWorker::CompleteLoop() {
  for (;;) {
    Op op;
    {
      std::unique_lock<std::mutex> lock(mu_);
      op_cv_.wait(lock, [&] { return applying_done_ || !submitted_.empty(); });
      if (submitted_.empty()) return;
      op = std::move(submitted_.front());
      submitted_.pop_front();
    }
    Settle(op);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
    }
    op_cv_.notify_all();
  }
}

void ConsumerWorker::Settle(Op& op) {
  if (!op.batch.empty()) {
    std::vector<Settled> settled = applier_.Finish(op.batch, std::move(op.pending));
    for (auto& [part, msgs] : op.held) part->Settle(msgs, settled);
    std::vector<SettleTracker::Commit> commits;
    for (size_t i = 0; i < op.batch.size(); ++i) {
      const Event& e = op.batch[i].event;
      if (settled[i].disposition == Disposition::kCommitted) {
        commits.push_back({e.node_id, e.sequence_number, settled[i].acked_seq,
                           settled[i].outcome});
      } else if (settled[i].disposition == Disposition::kDeadLettered) {
        tracker_.DeadLettered(e.node_id, e.sequence_number);
      }
    }
    tracker_.CommittedAll(commits);
  }
  for (natsMsgList& l : op.lists) natsMsgList_Destroy(&l);
}

}  // namespace apollo::bus::nats
