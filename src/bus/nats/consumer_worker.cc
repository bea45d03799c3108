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
  ready_.assign(parts_.size(), false);
  handed_.assign(parts_.size(), natsMsgList{});
  for (size_t i = 0; i < parts_.size(); ++i) fetchers_.emplace_back([this, i] { FetchLoop(i); });
  applier_thread_ = std::thread([this] { ApplyLoop(); });
}

void ConsumerWorker::Join() {
  cv_.notify_all();
  for (std::thread& t : fetchers_) {
    if (t.joinable()) t.join();
  }
  fetchers_.clear();
  if (applier_thread_.joinable()) applier_thread_.join();
  // Handed over, never applied: unacknowledged, so redelivered after ack_wait.
  for (size_t i = 0; i < ready_.size(); ++i) {
    if (ready_[i]) natsMsgList_Destroy(&handed_[i]);
    ready_[i] = false;
  }
  for (PartitionConsumer* p : parts_) p->Reset();
}

void ConsumerWorker::FetchLoop(size_t i) {
  PartitionConsumer* part = parts_[i];
  while (!stop_) {
    {
      // One hand-over per partition at a time: wait until it was taken.
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, kApplyIdle, [&] { return stop_ || !ready_[i]; });
      if (stop_) return;
      if (ready_[i]) continue;
    }
    natsMsgList list{};
    PartitionConsumer::Polled r = part->Poll(kFetchWaitMs, &list);
    if (r == PartitionConsumer::Polled::kMessages) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        handed_[i] = list;
        ready_[i] = true;
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
        return stop_ || std::find(ready_.begin(), ready_.end(), true) != ready_.end();
      });
      if (stop_) return;
      for (size_t i = 0; i < ready_.size(); ++i) {
        if (!ready_[i]) continue;
        taken.push_back(Fetched{parts_[i], handed_[i]});
        handed_[i] = natsMsgList{};
        ready_[i] = false;
      }
    }
    if (taken.empty()) continue;
    cv_.notify_all();  // the fetchers may fetch the next while this applies
    Apply(taken);
    for (Fetched& f : taken) natsMsgList_Destroy(&f.list);
  }
}

void ConsumerWorker::Apply(std::vector<Fetched>& fetched) {
  // Store ops of at most batch_max events per owned partition, split at
  // message boundaries; a partition's messages stay in fetch order across
  // ops (ops are applied one after another).
  const size_t op_max = static_cast<size_t>(std::max(1, options_.batch_max)) * parts_.size();
  std::vector<Delivery> batch;
  std::vector<std::pair<PartitionConsumer*, std::vector<HeldMsg>>> held;
  size_t events = 0;
  for (Fetched& f : fetched) {
    for (int i = 0; i < f.list.Count; ++i) {
      natsMsg* m = f.list.Msgs[i];
      size_t n = EventsIn(m);
      if (events > 0 && events + n > op_max) {
        ApplyOp(batch, held);
        events = 0;
      }
      if (held.empty() || held.back().first != f.part) {
        held.emplace_back(f.part, std::vector<HeldMsg>{});
      }
      f.part->Collect(&m, 1, batch, held.back().second);
      events += n;
    }
  }
  ApplyOp(batch, held);
}

void ConsumerWorker::ApplyOp(
    std::vector<Delivery>& batch,
    std::vector<std::pair<PartitionConsumer*, std::vector<HeldMsg>>>& held) {
  if (!batch.empty()) {
    std::vector<Settled> settled = applier_.Apply(batch);
    for (auto& [part, msgs] : held) part->Settle(msgs, settled);
    std::vector<SettleTracker::Commit> commits;
    for (size_t i = 0; i < batch.size(); ++i) {
      const Event& e = batch[i].event;
      if (settled[i].disposition == Disposition::kCommitted) {
        commits.push_back({e.node_id, e.sequence_number, settled[i].acked_seq,
                           settled[i].outcome});
      } else if (settled[i].disposition == Disposition::kDeadLettered) {
        tracker_.DeadLettered(e.node_id, e.sequence_number);
      }
    }
    tracker_.CommittedAll(commits);
  }
  batch.clear();
  held.clear();
}

}  // namespace apollo::bus::nats
