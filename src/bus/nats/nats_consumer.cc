#include "bus/nats/nats_consumer.h"

#include <algorithm>
#include <cstdlib>

namespace apollo::bus::nats {
namespace {
// The shortest fetch expiry (a request must expire).
constexpr int64_t kMinWaitMs = 1;
constexpr int64_t kNanosPerMicro = 1000;
// Idle long-poll fetches between checks that the consumer exists (about 2 s
// with the fetchers' 100 ms wait).
constexpr int kIdleFetchesPerCheck = 20;
// Nak'd messages whose counted events are remembered (see partial_).
constexpr size_t kPartialMax = 10'000;

uint64_t Trues(const std::vector<bool>& v) {
  return static_cast<uint64_t>(std::count(v.begin(), v.end(), true));
}

}  // namespace

PartitionConsumer::PartitionConsumer(int partition, const BusOptions& options,
                                     natsConnection* conn, const std::atomic<bool>& stop)
    : partition_(partition), options_(options), conn_(conn), stop_(stop),
      durable_("apollo-p" + std::to_string(partition)),
      subject_(options.subject_prefix + "." + std::to_string(partition)) {}

void PartitionConsumer::Reset() {
  sub_.reset();
  js_.reset();
}

ConsumerStats PartitionConsumer::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

Status PartitionConsumer::Subscribe() {
  sub_.reset();
  if (!js_) {
    jsCtx* js = nullptr;
    APOLLO_RETURN_IF_ERROR(FromNats(natsConnection_JetStream(&js, conn_, nullptr), "jetstream"));
    js_.reset(js);
  }
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = options_.stream.c_str();
  so.Config.Durable = durable_.c_str();
  so.Config.AckPolicy = js_AckExplicit;
  so.Config.AckWait = options_.ack_wait.count() * kNanosPerMicro;
  so.Config.MaxDeliver = -1;  // we count deliveries ourselves (see nats_bus.h)
  so.Config.MaxAckPending = std::max(1000, options_.batch_max * 4);
  so.Config.FilterSubject = subject_.c_str();
  natsSubscription* sub = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_PullSubscribe(&sub, js_.get(), subject_.c_str(), durable_.c_str(), nullptr,
                                  &so, &jerr);
  if (s != NATS_OK) return FromNats(s, "pull subscribe " + durable_, jerr);
  sub_.reset(sub);
  HoldForOrphans();
  return Status::Ok();
}

// Events delivered to a consumer that died unacknowledged are redelivered
// only after ack_wait, and the server serves redeliveries before new
// messages. Fetching before then would let a task's newer event (published
// again by the agent after the crash) overtake its older one: this
// partition waits it out (the worker's other partitions go on).
void PartitionConsumer::HoldForOrphans() {
  jsConsumerInfo* ci = nullptr;
  if (js_GetConsumerInfo(&ci, js_.get(), options_.stream.c_str(), durable_.c_str(), nullptr,
                         nullptr) != NATS_OK || !ci) {
    return;
  }
  bool orphans = ci->NumAckPending > 0;
  jsConsumerInfo_Destroy(ci);
  if (!orphans) return;
  fetch_after_ = std::chrono::steady_clock::now() + options_.ack_wait +
                 std::chrono::milliseconds(200);
}

bool PartitionConsumer::ConsumerExists() {
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetConsumerInfo(&ci, js_.get(), options_.stream.c_str(), durable_.c_str(),
                                    nullptr, &jerr);
  if (ci) jsConsumerInfo_Destroy(ci);
  // Only a definite "not found" counts: a disconnection is not a deletion.
  return !(s == NATS_NOT_FOUND || jerr == JSConsumerNotFoundErr || jerr == JSStreamNotFoundErr);
}

PartitionConsumer::Polled PartitionConsumer::Poll(int64_t wait_ms, natsMsgList* list) {
  if (stop_) return Polled::kNotReady;
  if (!sub_ && !Subscribe().ok()) return Polled::kError;
  if (std::chrono::steady_clock::now() < fetch_after_) return Polled::kNotReady;
  // One request: NoWait with an expiry returns at once with up to batch_max
  // messages when some are waiting, and otherwise waits (up to the expiry)
  // for the first and returns with it. (Without NoWait a Fetch waits until
  // the batch is full or the expiry.)
  jsFetchRequest req;
  jsFetchRequest_Init(&req);
  req.Batch = options_.batch_max;
  req.NoWait = true;
  req.Expires = std::max<int64_t>(wait_ms, kMinWaitMs) * 1'000'000;
  natsStatus s = natsSubscription_FetchRequest(list, sub_.get(), &req);
  if (list->Count > 0) {  // delivered: handled whatever the status says
    errors_ = 0;
    idle_ = 0;
    return Polled::kMessages;
  }
  if (s == NATS_TIMEOUT || s == NATS_NOT_FOUND) {
    // Quiet, or the stream (and with it this consumer) was deleted: a
    // Fetch on a deleted consumer just times out. Check now and then and
    // subscribe again (re-creating the consumer) if it is gone.
    if (wait_ms > 0 && ++idle_ >= kIdleFetchesPerCheck) {
      idle_ = 0;
      if (!ConsumerExists()) sub_.reset();
    }
    return Polled::kEmpty;
  }
  // Disconnected or the consumer is gone (server restarted without its
  // data): the worker backs off; re-create the subscription after a while.
  if (++errors_ >= 20) {
    errors_ = 0;
    sub_.reset();
  }
  return Polled::kError;
}

FetchedMsg ReadFetched(natsMsg* m) {
  FetchedMsg f{m};
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, m) == NATS_OK && meta) {
    f.delivered = static_cast<int>(meta->NumDelivered);
    f.stream_seq = meta->Sequence.Stream;
    jsMsgMetaData_Destroy(meta);
  }
  return f;
}

void PartitionConsumer::Collect(const FetchedMsg& f, std::vector<Delivery>& batch,
                                std::vector<HeldMsg>& held) {
  natsMsg* m = f.msg;
  const char* count = nullptr;
  bool grouped = natsMsgHeader_Get(m, kEventsHeader, &count) == NATS_OK;
  Result<std::vector<Event>> events = DecodeMessage(
      std::string_view(natsMsg_GetData(m), natsMsg_GetDataLength(m)), grouped);
  if (!events.ok() || events->empty()) {
    // Not one of ours: nothing to apply and nobody to tell. Terminate it.
    natsMsg_Term(m, nullptr);
    return;
  }
  held.push_back(HeldMsg{m, batch.size(), events->size(), f.stream_seq, f.delivered});
  for (Event& e : *events) batch.push_back(Delivery{std::move(e), f.delivered});
}

void PartitionConsumer::Settle(const std::vector<HeldMsg>& held,
                               const std::vector<Settled>& settled) {
  // Counted before the publishers hear of it, so Lag() after a completed
  // Publish includes it.
  std::lock_guard<std::mutex> lock(mu_);
  for (const HeldMsg& h : held) {
    std::vector<bool> counted;  // events of h already in stats_.applied
    if (auto it = partial_.find(h.stream_seq); it != partial_.end()) {
      counted = std::move(it->second);
      stats_.applied_unacked -= Trues(counted);
      partial_.erase(it);
    }
    counted.resize(h.count, false);
    bool retry = false;
    bool transient = true;  // every retry in h is a store outage's
    for (size_t k = 0; k < h.count; ++k) {
      const Settled& s = settled[h.first + k];
      if (s.disposition == Disposition::kRetry) {
        retry = true;
        transient = transient && s.transient;
      } else if (!counted[k]) {
        counted[k] = true;
        ++stats_.applied;
        if (s.disposition == Disposition::kDeadLettered) ++stats_.dead;
      }
    }
    if (retry) {
      stats_.applied_unacked += Trues(counted);
      partial_[h.stream_seq] = std::move(counted);
      int shift = RetryShift(h.delivered, transient);
      int64_t delay_ns = options_.redeliver_delay.count() * kNanosPerMicro * (1LL << shift);
      natsMsg_NakWithDelay(h.msg, delay_ns / 1'000'000, nullptr);  // ms
      continue;
    }
    // Every event committed or parked: acknowledge. A lost ack means a
    // redelivery, which the store dedups (or the book recognises as parked).
    natsMsg_Ack(h.msg, nullptr);
  }
  // A nak'd message that never comes back (its stream was deleted) must
  // not pin memory: forget the oldest beyond a bound (lag may then count
  // its events twice until the process restarts).
  while (partial_.size() > kPartialMax) {
    stats_.applied_unacked -= Trues(partial_.begin()->second);
    partial_.erase(partial_.begin());
  }
}

}  // namespace apollo::bus::nats
