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
// Fetched messages a partition may have waiting for the apply thread, in
// fetches of batch_max. The fetcher long-polls again at once instead of
// waiting for the take, so the server has a pull request to deliver to while
// the apply thread is busy.
constexpr size_t kHandOversMax = 4;
// How long the apply thread holds back a send round some of whose messages
// have not arrived (round_cut.h). Its parts arrive within ~1-3 ms here.
constexpr Duration kRoundWait = std::chrono::milliseconds(5);
// Holding is switched off for kNoHoldFor when kExpiredMax rounds ran out of
// wait within kExpiredWindow: their other messages go elsewhere (another
// orchestrator's consumers share the durable consumers), so waiting for
// them only delays every round.
constexpr size_t kExpiredMax = 5;
constexpr Duration kExpiredWindow = std::chrono::seconds(1);
constexpr Duration kNoHoldFor = std::chrono::seconds(30);

Instant Now() { return std::chrono::steady_clock::now(); }

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
    : parts_(std::move(parts)), options_(options),
      handed_max_(kHandOversMax * static_cast<size_t>(std::max(1, options.batch_max))),
      tracker_(tracker),
      applier_(store, book, tasks, options.max_deliver), stop_(stop) {}

void ConsumerWorker::Start() {
  handed_.assign(parts_.size(), {});
  for (size_t i = 0; i < parts_.size(); ++i) fetchers_.emplace_back([this, i] { FetchLoop(i); });
  applier_thread_ = std::thread([this] { ApplyLoop(); });
  completer_thread_ = std::thread([this] { CompleteLoop(); });
}

void ConsumerWorker::Join() {
  fetch_cv_.notify_all();
  apply_cv_.notify_all();
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
  for (std::deque<Handed>& q : handed_) {
    for (Handed& h : q) natsMsg_Destroy(h.msg.msg);
    q.clear();
  }
  for (PartitionConsumer* p : parts_) p->Reset();
}

void ConsumerWorker::FetchLoop(size_t i) {
  PartitionConsumer* part = parts_[i];
  while (!stop_) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      fetch_cv_.wait_for(lock, kApplyIdle,
                         [&] { return stop_ || handed_[i].size() < handed_max_; });
      if (stop_) return;
      if (handed_[i].size() >= handed_max_) continue;
    }
    natsMsgList list{};
    PartitionConsumer::Polled r = part->Poll(kFetchWaitMs, &list);
    if (r == PartitionConsumer::Polled::kMessages) {
      const Instant now = Now();
      std::vector<Handed> got;
      got.reserve(static_cast<size_t>(list.Count));
      for (int k = 0; k < list.Count; ++k) {
        FetchedMsg f = ReadFetched(list.Msgs[k]);
        list.Msgs[k] = nullptr;  // kept: the list only frees its array
        const char* tag = nullptr;
        natsMsgHeader_Get(f.msg, kRoundHeader, &tag);
        std::optional<RoundTag> round = ParseRoundTag(tag);
        // A redelivery comes back alone (its round-mates were acked): it
        // must not wait for them.
        if (round && f.delivered > 1) round.reset();
        got.push_back(round ? Handed{f, std::move(round->id), round->parts, now}
                            : Handed{f, std::string(), 1, now});
      }
      natsMsgList_Destroy(&list);
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (Handed& h : got) handed_[i].push_back(std::move(h));
      }
      apply_cv_.notify_one();
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
    Taken taken;
    {
      // Cut as late as possible: once the store has room for another op,
      // so that what arrived meanwhile goes in it.
      std::unique_lock<std::mutex> lock(mu_);
      auto ready = [&] {
        return in_flight_ < kOpsInFlight &&
               std::any_of(handed_.begin(), handed_.end(),
                           [](const auto& q) { return !q.empty(); });
      };
      apply_cv_.wait_for(lock, kApplyIdle, [&] { return stop_ || ready(); });
      if (stop_) return;
      if (!ready()) continue;
      std::optional<Instant> recheck;
      taken = TakeLocked(&recheck);
      if (taken.empty()) {
        // Every waiting message belongs to a round still arriving.
        if (recheck) apply_cv_.wait_until(lock, *recheck);
        continue;
      }
    }
    fetch_cv_.notify_all();  // the fetchers may fetch more while this applies
    Apply(taken);
  }
}

ConsumerWorker::Taken ConsumerWorker::TakeLocked(std::optional<Instant>* recheck) {
  std::vector<std::vector<Waiting>> view(handed_.size());
  for (size_t p = 0; p < handed_.size(); ++p) {
    view[p].reserve(handed_[p].size());
    for (const Handed& h : handed_[p]) view[p].push_back(Waiting{h.round, h.parts, h.at});
  }
  const Instant now = Now();
  Cut cut = CutAtWholeRounds(view, now, now < no_hold_until_ ? Duration{0} : kRoundWait);
  *recheck = cut.recheck;
  if (cut.expired > 0 && now >= no_hold_until_) {
    if (now - expired_since_ > kExpiredWindow) {
      expired_since_ = now;
      expired_ = 0;
    }
    expired_ += cut.expired;
    if (expired_ >= kExpiredMax) no_hold_until_ = now + kNoHoldFor;
  }
  Taken taken;
  for (size_t p = 0; p < handed_.size(); ++p) {
    if (cut.take[p] == 0) continue;
    std::vector<FetchedMsg> msgs;
    msgs.reserve(cut.take[p]);
    for (size_t k = 0; k < cut.take[p]; ++k) {
      msgs.push_back(handed_[p].front().msg);
      handed_[p].pop_front();
    }
    taken.emplace_back(parts_[p], std::move(msgs));
  }
  return taken;
}

void ConsumerWorker::Apply(Taken& taken) {
  // Store ops of at most batch_max events per owned partition, split at
  // message boundaries; a partition's messages stay in fetch order across
  // ops (the store commits ops in submission order).
  const size_t op_max = static_cast<size_t>(std::max(1, options_.batch_max)) * parts_.size();
  std::vector<Delivery> batch;
  Held held;
  size_t events = 0;
  std::vector<natsMsg*> owned;
  for (auto& [part, msgs] : taken) {
    for (const FetchedMsg& m : msgs) {
      size_t n = EventsIn(m.msg);
      if (events > 0 && events + n > op_max) {
        Submit(batch, held, {});
        events = 0;
      }
      if (held.empty() || held.back().first != part) {
        held.emplace_back(part, std::vector<HeldMsg>{});
      }
      part->Collect(m, batch, held.back().second);
      owned.push_back(m.msg);
      events += n;
    }
  }
  // The messages live until the last op that holds any of them is settled;
  // ops are settled in submission order.
  Submit(batch, held, std::move(owned));
}

void ConsumerWorker::Submit(std::vector<Delivery>& batch, Held& held,
                            std::vector<natsMsg*> msgs) {
  if (batch.empty() && msgs.empty()) return;
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
  op.msgs = std::move(msgs);
  // Before the op can commit: whichever op applies an event reports it,
  // and until then no other op's mark settles it (settle_tracker.h).
  for (const Delivery& d : op.batch) tracker_.Carry(d.event.node_id, d.event.sequence_number);
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
    apply_cv_.notify_one();
  }
}

void ConsumerWorker::Settle(Op& op) {
  if (!op.batch.empty()) {
    std::vector<Settled> settled = applier_.Finish(op.batch, std::move(op.pending));
    for (auto& [part, msgs] : op.held) part->Settle(msgs, settled);
    ReportSettled(tracker_, settled, [&](size_t i) -> const Event& { return op.batch[i].event; });
    for (size_t i = 0; i < settled.size() && i < op.batch.size(); ++i) {
      if (settled[i].disposition == Disposition::kRetry) {
        tracker_.Uncarry(op.batch[i].event.node_id, op.batch[i].event.sequence_number);
      }
    }
  }
  for (natsMsg* m : op.msgs) natsMsg_Destroy(m);
}

}  // namespace apollo::bus::nats
