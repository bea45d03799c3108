#include "bus/nats/nats_consumer.h"

#include <algorithm>
#include <cstdlib>

namespace apollo::bus::nats {
namespace {
constexpr int64_t kFetchWaitMs = 100;
constexpr int64_t kNanosPerMicro = 1000;
// Idle fetches (kFetchWaitMs each) between checks that the consumer exists.
constexpr int kIdleFetchesPerCheck = 20;
// Nak'd messages whose counted events are remembered (see partial_).
constexpr size_t kPartialMax = 10'000;

uint64_t Trues(const std::vector<bool>& v) {
  return static_cast<uint64_t>(std::count(v.begin(), v.end(), true));
}

// Events a message says it carries (kEventsHeader; none: one).
size_t EventsIn(natsMsg* m) {
  const char* v = nullptr;
  if (natsMsgHeader_Get(m, kEventsHeader, &v) != NATS_OK || !v) return 1;
  return std::max<size_t>(1, std::strtoull(v, nullptr, 10));
}
}  // namespace

PartitionConsumer::PartitionConsumer(int partition, const BusOptions& options,
                                     natsConnection* conn, store::StateStore& store,
                                     DeadLetterBook& book, TaskDirectory& tasks,
                                     SettleTracker& tracker)
    : partition_(partition), options_(options), conn_(conn), store_(store), book_(book),
      tracker_(tracker), applier_(store, book, tasks, options.max_deliver),
      durable_("apollo-p" + std::to_string(partition)),
      subject_(options.subject_prefix + "." + std::to_string(partition)) {}

void PartitionConsumer::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void PartitionConsumer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
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
  WaitForOrphans();
  return Status::Ok();
}

// Events delivered to a consumer that died unacknowledged are redelivered
// only after ack_wait, and the server serves redeliveries before new
// messages. Fetching before then would let a task's newer event (published
// again by the agent after the crash) overtake its older one: wait it out.
void PartitionConsumer::WaitForOrphans() {
  jsConsumerInfo* ci = nullptr;
  if (js_GetConsumerInfo(&ci, js_.get(), options_.stream.c_str(), durable_.c_str(), nullptr,
                         nullptr) != NATS_OK || !ci) {
    return;
  }
  bool orphans = ci->NumAckPending > 0;
  jsConsumerInfo_Destroy(ci);
  if (!orphans) return;
  auto until = std::chrono::steady_clock::now() + options_.ack_wait +
               std::chrono::milliseconds(200);
  while (!stop_ && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
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

void PartitionConsumer::Run() {
  int errors = 0;
  int idle = 0;
  while (!stop_) {
    tracker_.Expire();
    if (!sub_ && !Subscribe().ok()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    // One request: NoWait with an expiry returns at once with up to
    // batch_max messages when some are waiting, and otherwise waits (up to
    // the expiry) for the first and returns with it. (Without NoWait a Fetch
    // waits until the batch is full or the expiry; the former long-poll for
    // one message plus a second request for the rest cost a round trip to
    // the server per batch.)
    natsMsgList list{};
    jsFetchRequest req;
    jsFetchRequest_Init(&req);
    req.Batch = options_.batch_max;
    req.NoWait = true;
    req.Expires = kFetchWaitMs * 1'000'000;
    natsStatus s = natsSubscription_FetchRequest(&list, sub_.get(), &req);
    if (list.Count > 0) {  // delivered: handled whatever the status says
      errors = 0;
      idle = 0;
      // One store apply per at most batch_max events (a message is never
      // split), in fetch order.
      std::vector<natsMsg*> slice;
      size_t events = 0;
      for (int i = 0; i < list.Count; ++i) {
        size_t n = EventsIn(list.Msgs[i]);
        if (!slice.empty() && events + n > static_cast<size_t>(options_.batch_max)) {
          Handle(slice);
          slice.clear();
          events = 0;
        }
        slice.push_back(list.Msgs[i]);
        events += n;
      }
      Handle(slice);
      natsMsgList_Destroy(&list);
      continue;
    }
    natsMsgList_Destroy(&list);
    if (s == NATS_TIMEOUT) {
      // Quiet, or the stream (and with it this consumer) was deleted: a
      // Fetch on a deleted consumer just times out. Check now and then and
      // subscribe again (re-creating the consumer) if it is gone.
      if (++idle >= kIdleFetchesPerCheck) {
        idle = 0;
        if (!ConsumerExists()) sub_.reset();
      }
      continue;
    }
    // Disconnected or the consumer is gone (server restarted without its
    // data): back off, and re-create the subscription after a while.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (++errors >= 20) {
      errors = 0;
      sub_.reset();
    }
  }
}

void PartitionConsumer::Handle(const std::vector<natsMsg*>& fetched) {
  struct Held {
    natsMsg* msg;
    size_t first;  // index of its first event in `batch`
    size_t count;
    uint64_t stream_seq;
    int delivered;
  };
  std::vector<Delivery> batch;
  std::vector<Held> held;
  for (natsMsg* m : fetched) {
    jsMsgMetaData* meta = nullptr;
    int delivered = 1;
    uint64_t stream_seq = 0;
    if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
      delivered = static_cast<int>(meta->NumDelivered);
      stream_seq = meta->Sequence.Stream;
      jsMsgMetaData_Destroy(meta);
    }
    const char* count = nullptr;
    bool grouped = natsMsgHeader_Get(m, kEventsHeader, &count) == NATS_OK;
    Result<std::vector<Event>> events = DecodeMessage(
        std::string_view(natsMsg_GetData(m), natsMsg_GetDataLength(m)), grouped);
    if (!events.ok() || events->empty()) {
      // Not one of ours: nothing to apply and nobody to tell. Terminate it.
      natsMsg_Term(m, nullptr);
      continue;
    }
    held.push_back(Held{m, batch.size(), events->size(), stream_seq, delivered});
    for (Event& e : *events) batch.push_back(Delivery{std::move(e), delivered});
  }
  if (batch.empty()) return;
  std::vector<Settled> settled = applier_.Apply(batch);
  {
    // Counted before the publishers hear of it, so Lag() after a completed
    // Publish includes it.
    std::lock_guard<std::mutex> lock(mu_);
    for (const Held& h : held) {
      std::vector<bool> counted;  // events of h already in stats_.applied
      if (auto it = partial_.find(h.stream_seq); it != partial_.end()) {
        counted = std::move(it->second);
        stats_.applied_unacked -= Trues(counted);
        partial_.erase(it);
      }
      counted.resize(h.count, false);
      bool retry = false;
      for (size_t k = 0; k < h.count; ++k) {
        const Settled& s = settled[h.first + k];
        if (s.disposition == Disposition::kRetry) {
          retry = true;
        } else if (!counted[k]) {
          counted[k] = true;
          ++stats_.applied;
          if (s.disposition == Disposition::kDeadLettered) ++stats_.dead;
        }
      }
      if (retry) {
        stats_.applied_unacked += Trues(counted);
        partial_[h.stream_seq] = std::move(counted);
        int shift = std::min(h.delivered - 1, 10);
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
  for (size_t i = 0; i < batch.size(); ++i) {
    const Event& e = batch[i].event;
    if (settled[i].disposition == Disposition::kCommitted) {
      tracker_.Committed(e.node_id, e.sequence_number, settled[i].acked_seq,
                         settled[i].outcome);
    } else if (settled[i].disposition == Disposition::kDeadLettered) {
      tracker_.DeadLettered(e.node_id, e.sequence_number);
    }
  }
}

}  // namespace apollo::bus::nats
