#include "bus/nats/nats_bus.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <mutex>
#include <thread>
#include <vector>

#include "bus/applier.h"
#include "bus/dead_letters.h"
#include "bus/nats/consumer_worker.h"
#include "bus/nats/nats_consumer.h"
#include "bus/nats/nats_util.h"
#include "bus/nats/round_cut.h"
#include "bus/settle_tracker.h"

namespace apollo::bus {
namespace {

using namespace apollo::bus::nats;  // NOLINT: this file is the NATS backend

constexpr int64_t kPublishWaitMs = 5000;
// Messages per partition whose event counts Lag() reads (one request each,
// under mu_, which publishers also take: kept small; the rest is estimated).
constexpr uint64_t kLagScanMax = 32;
// Apply threads (consumer_worker.h); each owns every kConsumerWorkers-th
// partition and applies what their fetchers handed over in one store op.
constexpr int kConsumerWorkers = 1;
// A send round stops taking queued Publish calls beyond this many bytes of
// payload (a message per partition must stay under nats-server's 1 MB
// max_payload; one call is always sent, whatever its size).
constexpr size_t kRoundBytesMax = 256 * 1024;

// "<16 random hex digits>.": this bus instance's round ids.
std::string RoundPrefix() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  char buf[18];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return std::string(buf) + ".";
}

size_t PayloadBytes(const std::vector<Event>& events) {
  size_t n = 0;
  for (const Event& e : events) n += e.payload.size() + e.task_id.size() + e.node_id.size() + 32;
  return n;
}

// One publisher's JetStream context: async publishes of a batch, then a wait
// for all their acks. Errors arrive on cnats' thread through ErrHandler.
struct PubCtx {
  JsPtr js;
  std::mutex mu;
  Status error;               // guarded by mu
  bool store_failed = false;  // guarded by mu: the stream cannot store (see RecoverStream)
};

void OnPublishError(jsCtx*, jsPubAckErr* pae, void* closure) {
  auto* c = static_cast<PubCtx*>(closure);
  std::lock_guard<std::mutex> lock(c->mu);
  if (pae->ErrCode == JSStreamStoreFailedErr) c->store_failed = true;
  if (c->error.ok()) {
    c->error = FromNats(pae->Err, std::string("publish: ") + (pae->ErrText ? pae->ErrText : ""),
                        pae->ErrCode);
  }
}

class NatsBus final : public EventBus {
 public:
  NatsBus(std::string url, const BusOptions& options, store::StateStore& store, const Clock& clock)
      : url_(std::move(url)), options_(options), store_(store), clock_(clock),
        book_(store, options.on_alert), tasks_(store), tracker_(clock),
        published_(static_cast<size_t>(std::max(1, options.partitions))) {}
  ~NatsBus() override { Stop(); }

  // EventBus
  Status Start() override;
  Status StartConsumers() override;
  void Stop() override;
  std::future<Result<PublishAck>> Publish(std::string node_id, std::vector<Event> events) override;
  Result<std::vector<PartitionLag>> Lag() override;
  Status ReplayDeadLetter(int64_t id) override { return ReplayLetter(store_, book_, id); }
  Result<int> ReplayAllDeadLetters() override { return ReplayAllLetters(store_, book_); }
  Status DropDeadLetter(int64_t id) override { return DropLetter(store_, book_, id); }
  std::string Name() const override { return url_; }

 private:
  Status Connect();
  Status EnsureStream();
  void StartConsumersLocked();
  // The stream exists but cannot store (nats-server 2.9: a stream deleted
  // and re-created at once can lose its directory to the deletion, and
  // every later store fails). Deletes and re-creates it, at most once per
  // kRecoverEvery. Safe for durability: nothing in the stream was
  // acknowledged to an agent before the store committed it, so the agents
  // resend whatever the stream held. mu_ held.
  void RecoverStreamLocked();
  // The stream was deleted (by an operator, or lost): re-creates it, after a
  // pause so the server has finished removing the old one's files (creating
  // it at once races with that removal in nats-server 2.9 and leaves a
  // stream that accepts messages it cannot read back). mu_ held.
  void RecreateIfMissingLocked();
  // Running and connected; else kUnavailable (fail fast). mu_ held.
  Status ReadyLocked() const;
  Result<std::unique_ptr<PubCtx>> TakeCtx();
  void GiveCtx(std::unique_ptr<PubCtx> c);

  // A Publish call's events on their way to JetStream (see Send).
  struct Outgoing {
    const std::vector<Event>* events = nullptr;
    Status status;
    bool done = false;
  };
  // Sends `mine` together with the Publish calls queued behind it: one
  // message per partition for all of them, because JetStream's cost (and
  // its latency on a loaded machine) is per message. The caller at the front
  // of the queue sends for everyone queued (leveldb's writer queue); the
  // others wait for its outcome. Returns once the messages are stored.
  Status Send(Outgoing& mine);
  // One round: publishes `round`'s events, one message per partition, and
  // waits for JetStream's acks; on failure, repairs the stream if needed.
  Status SendRound(const std::vector<Outgoing*>& round);
  Status PublishAll(PubCtx& c, const std::vector<Outgoing*>& round);
  // Events in the messages the stream holds on `subject` (`messages` of
  // them by the consumer's count), read from their kEventsHeader (at most
  // kLagScanMax messages; the rest estimated from their average), and the
  // age of the oldest.
  struct Held {
    uint64_t events = 0;
    Duration oldest{0};
  };
  Held HeldEvents(const std::string& subject, uint64_t messages);

  const std::string url_;
  const BusOptions options_;
  store::StateStore& store_;
  const Clock& clock_;
  DeadLetterBook book_;
  TaskDirectory tasks_;
  SettleTracker tracker_;
  std::vector<std::atomic<uint64_t>> published_;  // per partition, this process

  std::mutex mu_;
  bool running_ = false;                       // guarded by mu_
  ConnPtr conn_;                               // set while running
  JsPtr js_;                                   // management calls; set while running
  std::vector<std::unique_ptr<PubCtx>> idle_;  // guarded by mu_
  std::vector<std::unique_ptr<PartitionConsumer>> consumers_;  // one per partition
  std::vector<std::unique_ptr<ConsumerWorker>> workers_;        // own consumers_
  std::atomic<bool> stopping_{false};                           // ends the workers
  TimePoint recovered_at_{};  // guarded by mu_: last RecoverStreamLocked

  // Round ids: unique per bus instance (the prefix) and round.
  const std::string round_prefix_ = RoundPrefix();
  std::atomic<uint64_t> rounds_sent_{0};
  std::mutex send_mu_;
  std::condition_variable send_cv_;
  std::deque<Outgoing*> outgoing_;  // guarded by send_mu_; the front one sends
};

constexpr Duration kRecoverEvery = std::chrono::seconds(5);

void NatsBus::RecreateIfMissingLocked() {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, js_.get(), options_.stream.c_str(), nullptr, &jerr);
  if (si) jsStreamInfo_Destroy(si);
  if (s == NATS_OK) return;
  if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  (void)EnsureStream();
}

void NatsBus::RecoverStreamLocked() {
  TimePoint now = clock_.Now();
  if (recovered_at_ != TimePoint{} && now - recovered_at_ < kRecoverEvery) return;
  recovered_at_ = now;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  (void)js_DeleteStream(js_.get(), options_.stream.c_str(), nullptr, &jerr);
  // Let the server finish removing the old files before the new stream
  // creates them (the race this recovers from). Publishers wait on mu_.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  (void)EnsureStream();
}

Status NatsBus::Connect() {
  natsOptions* raw = nullptr;
  APOLLO_RETURN_IF_ERROR(FromNats(natsOptions_Create(&raw), "nats options"));
  OptsPtr opts(raw);
  natsOptions_SetURL(raw, url_.c_str());
  natsOptions_SetTimeout(raw, 2000);
  natsOptions_SetMaxReconnect(raw, -1);
  natsOptions_SetReconnectWait(raw, 100);
  natsOptions_SetPingInterval(raw, 2000);
  natsConnection* c = nullptr;
  APOLLO_RETURN_IF_ERROR(FromNats(natsConnection_Connect(&c, raw), "connect to " + url_));
  conn_.reset(c);
  jsCtx* js = nullptr;
  APOLLO_RETURN_IF_ERROR(FromNats(natsConnection_JetStream(&js, c, nullptr), "jetstream"));
  js_.reset(js);
  return Status::Ok();
}

Status NatsBus::EnsureStream() {
  std::string subjects = options_.subject_prefix + ".*";
  const char* subj[] = {subjects.c_str()};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = options_.stream.c_str();
  cfg.Subjects = subj;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_FileStorage;
  cfg.Retention = js_WorkQueuePolicy;  // acked (= committed) events leave
  cfg.Duplicates = 120LL * 1000 * 1000 * 1000;
  cfg.AllowDirect = true;  // lag: oldest message of a partition
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&si, js_.get(), &cfg, nullptr, &jerr);
  if (si) jsStreamInfo_Destroy(si);
  if (s == NATS_OK || jerr == JSStreamNameExistErr) return Status::Ok();
  return FromNats(s, "create stream " + options_.stream, jerr);
}

Status NatsBus::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) return Status::Ok();
  APOLLO_RETURN_IF_ERROR(Connect());
  APOLLO_RETURN_IF_ERROR(EnsureStream());
  APOLLO_RETURN_IF_ERROR(book_.Load());
  stopping_ = false;
  if (options_.consume) StartConsumersLocked();
  running_ = true;
  return Status::Ok();
}

Status NatsBus::StartConsumers() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_) return Status::Unavailable("event bus not running");
  if (consumers_.empty()) StartConsumersLocked();
  return Status::Ok();
}

// One consumer per partition (durable: shared with any other process's),
// served by kConsumerWorkers apply threads. mu_ held.
void NatsBus::StartConsumersLocked() {
  const int parts = static_cast<int>(published_.size());
  for (int p = 0; p < parts; ++p) {
    consumers_.push_back(std::make_unique<PartitionConsumer>(p, options_, conn_.get(), stopping_));
  }
  const int workers = std::max(1, std::min(kConsumerWorkers, parts));
  for (int w = 0; w < workers; ++w) {
    std::vector<PartitionConsumer*> owned;
    for (int p = w; p < parts; p += workers)
      owned.push_back(consumers_[static_cast<size_t>(p)].get());
    workers_.push_back(std::make_unique<ConsumerWorker>(std::move(owned), options_, store_, book_,
                                                        tasks_, tracker_, stopping_));
    workers_.back()->Start();
  }
}

void NatsBus::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_) return;
  running_ = false;
  stopping_ = true;
  workers_.clear();  // each joins its thread
  consumers_.clear();
  tracker_.FailAll(Status::Unavailable("event bus stopped"));
  idle_.clear();
  js_.reset();
  if (conn_) natsConnection_Close(conn_.get());
  conn_.reset();
}

Status NatsBus::ReadyLocked() const {
  if (!running_) return Status::Unavailable("event bus not running");
  if (natsConnection_Status(conn_.get()) != NATS_CONN_STATUS_CONNECTED) {
    return Status::Unavailable("event bus " + url_ + " disconnected (retry)");
  }
  return Status::Ok();
}

Result<std::unique_ptr<PubCtx>> NatsBus::TakeCtx() {
  std::lock_guard<std::mutex> lock(mu_);
  APOLLO_RETURN_IF_ERROR(ReadyLocked());
  if (!idle_.empty()) {
    auto c = std::move(idle_.back());
    idle_.pop_back();
    return c;
  }
  auto c = std::make_unique<PubCtx>();
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = kPublishWaitMs;
  jo.PublishAsync.ErrHandler = OnPublishError;
  jo.PublishAsync.ErrHandlerClosure = c.get();
  jsCtx* js = nullptr;
  APOLLO_RETURN_IF_ERROR(FromNats(natsConnection_JetStream(&js, conn_.get(), &jo), "jetstream"));
  c->js.reset(js);
  return c;
}

void NatsBus::GiveCtx(std::unique_ptr<PubCtx> c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) idle_.push_back(std::move(c));
}

Status NatsBus::PublishAll(PubCtx& c, const std::vector<Outgoing*>& round) {
  const std::string now_us = std::to_string(ToUnixMicros(clock_.Now()));
  const int parts = static_cast<int>(published_.size());
  std::vector<const std::vector<Event>*> calls;
  for (const Outgoing* o : round) calls.push_back(o->events);
  std::vector<PartitionGroup> groups = GroupByPartition(calls, parts);
  const std::string round_tag = FormatRoundTag(
      round_prefix_ + std::to_string(rounds_sent_.fetch_add(1, std::memory_order_relaxed)),
      groups.size());
  for (const PartitionGroup& g : groups) {
    const int p = g.partition;
    const std::vector<const Event*>& group = g.events;
    std::string subject = options_.subject_prefix + "." + std::to_string(p);
    std::string data = EncodeGroup(group);
    std::string id = GroupMsgId(p, group);
    std::string count = std::to_string(group.size());
    natsMsg* m = nullptr;
    APOLLO_RETURN_IF_ERROR(FromNats(
        natsMsg_Create(&m, subject.c_str(), nullptr, data.data(), static_cast<int>(data.size())),
        "message"));
    natsMsgHeader_Set(m, kPublishedAtHeader, now_us.c_str());
    natsMsgHeader_Set(m, kEventsHeader, count.c_str());
    natsMsgHeader_Set(m, kRoundHeader, round_tag.c_str());
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MsgId = id.c_str();
    natsStatus s = js_PublishMsgAsync(c.js.get(), &m, &po);  // takes m on success
    if (m) natsMsg_Destroy(m);
    APOLLO_RETURN_IF_ERROR(FromNats(s, "publish " + id));
    published_[static_cast<size_t>(p)].fetch_add(group.size(), std::memory_order_relaxed);
  }
  jsPubOptions wait;
  jsPubOptions_Init(&wait);
  wait.MaxWait = kPublishWaitMs;
  APOLLO_RETURN_IF_ERROR(FromNats(js_PublishAsyncComplete(c.js.get(), &wait), "publish acks"));
  std::lock_guard<std::mutex> lock(c.mu);
  return c.error;
}

Status NatsBus::Send(Outgoing& mine) {
  std::unique_lock<std::mutex> lock(send_mu_);
  outgoing_.push_back(&mine);
  send_cv_.wait(lock, [&] { return mine.done || outgoing_.front() == &mine; });
  if (mine.done) return mine.status;
  // At the front: send for everyone queued, up to kRoundBytesMax.
  std::vector<Outgoing*> round;
  size_t bytes = 0;
  for (Outgoing* o : outgoing_) {
    size_t b = PayloadBytes(*o->events);
    if (!round.empty() && bytes + b > kRoundBytesMax) break;
    round.push_back(o);
    bytes += b;
  }
  lock.unlock();
  Status s = SendRound(round);

  lock.lock();
  for (Outgoing* o : round) {
    outgoing_.pop_front();  // the round is the front of the queue
    o->status = s;
    o->done = true;
  }
  lock.unlock();
  send_cv_.notify_all();  // the round's callers, and the next sender
  return s;
}

Status NatsBus::SendRound(const std::vector<Outgoing*>& round) {
  Result<std::unique_ptr<PubCtx>> ctx = TakeCtx();
  if (!ctx.ok()) return ctx.status();
  Status s = PublishAll(**ctx, round);
  if (s.ok()) {
    GiveCtx(std::move(*ctx));
    return s;
  }
  // The context may hold unacknowledged messages: do not reuse it. The
  // callers' registered waiters expire unheard; they retry.
  bool store_failed = false;
  {
    std::lock_guard<std::mutex> lock((*ctx)->mu);
    store_failed = (*ctx)->store_failed;
  }
  if (s.code() != StatusCode::kUnavailable ||
      natsConnection_Status(conn_.get()) == NATS_CONN_STATUS_CONNECTED) {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ && store_failed) {
      RecoverStreamLocked();
    } else if (running_) {
      RecreateIfMissingLocked();  // the stream may have been deleted
    }
  }
  return s.code() == StatusCode::kUnavailable ? s : Status::Unavailable(s.message());
}

std::future<Result<PublishAck>> NatsBus::Publish(std::string node_id, std::vector<Event> events) {
  auto fail = [](Status s) {
    std::promise<Result<PublishAck>> p;
    p.set_value(std::move(s));
    return p.get_future();
  };
  std::vector<uint64_t> seqs;
  for (const Event& e : events) {
    if (e.node_id != node_id) return fail(Status::InvalidArgument("event of another node"));
    seqs.push_back(e.sequence_number);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Status s = ReadyLocked(); !s.ok()) return fail(s);
  }
  // Registered before publishing: a commit can come back before we return.
  auto future = tracker_.Register(node_id, seqs, options_.commit_timeout);
  Outgoing mine;
  mine.events = &events;
  if (Status s = Send(mine); !s.ok()) return fail(s);
  // Republished events that JetStream dropped as duplicates of events already
  // committed will not be delivered again: the store's mark settles them.
  Result<uint64_t> hwm = store_.HighestStoredSeq(node_id);
  if (hwm.ok()) {
    tracker_.CommittedUpTo(node_id, *hwm);
    tracker_.SettleRemembered(node_id, *hwm);
  }
  return future;
}

NatsBus::Held NatsBus::HeldEvents(const std::string& subject, uint64_t messages) {
  Held out;
  uint64_t scanned = 0;
  uint64_t from = 1;
  bool ended = false;  // the stream holds no further message on `subject`
  for (; scanned < messages && scanned < kLagScanMax; ++scanned) {
    jsDirectGetMsgOptions dg;
    jsDirectGetMsgOptions_Init(&dg);
    dg.Sequence = from;
    dg.NextBySubject = subject.c_str();
    natsMsg* m = nullptr;
    natsStatus s = js_DirectGetMsg(&m, js_.get(), options_.stream.c_str(), nullptr, &dg);
    if (s != NATS_OK) {
      ended = s == NATS_NOT_FOUND;  // acked meanwhile: nothing more to count
      break;
    }
    MsgPtr owner(m);
    const char* v = nullptr;
    uint64_t seq = natsMsg_GetSequence(m);
    if (natsMsgHeader_Get(m, "Nats-Sequence", &v) == NATS_OK && v) {
      seq = std::strtoull(v, nullptr, 10);
    }
    uint64_t n = 1;  // a message without the header is one event
    if (natsMsgHeader_Get(m, kEventsHeader, &v) == NATS_OK && v) {
      n = std::max<uint64_t>(1, std::strtoull(v, nullptr, 10));
    }
    out.events += n;
    if (scanned == 0 && natsMsgHeader_Get(m, kPublishedAtHeader, &v) == NATS_OK && v) {
      Duration age = clock_.Now() - FromUnixMicros(std::strtoll(v, nullptr, 10));
      out.oldest = age.count() > 0 ? age : Duration(0);
    }
    if (seq == 0) {  // cannot step on: the rest is estimated below
      ++scanned;
      break;
    }
    from = seq + 1;
  }
  if (scanned < messages && !ended) {
    // Not read (too many, or the server did not answer): estimated at the
    // average of those read, at least one event per message.
    uint64_t rest = messages - scanned;
    out.events += scanned > 0 ? std::max(rest, rest * out.events / scanned) : rest;
  }
  return out;
}

Result<std::vector<PartitionLag>> NatsBus::Lag() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_) return Status::Unavailable("event bus not running");
  std::vector<PartitionLag> out;
  for (int p = 0; p < static_cast<int>(published_.size()); ++p) {
    PartitionLag l;
    l.partition = p;
    l.published = published_[static_cast<size_t>(p)].load();
    uint64_t applied_unacked = 0;
    if (p < static_cast<int>(consumers_.size())) {
      ConsumerStats st = consumers_[static_cast<size_t>(p)]->Stats();
      l.applied = st.applied;
      l.dead_lettered = st.dead;
      applied_unacked = st.applied_unacked;
    }
    std::string durable = "apollo-p" + std::to_string(p);
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_GetConsumerInfo(&ci, js_.get(), options_.stream.c_str(), durable.c_str(),
                                      nullptr, &jerr);
    if (s == NATS_OK && ci) {
      // The server counts messages; a message holds several events. Work
      // queue: the messages still in the stream are the unacked ones.
      uint64_t messages = ci->NumPending + static_cast<uint64_t>(ci->NumAckPending);
      jsConsumerInfo_Destroy(ci);
      if (messages > 0) {
        Held h = HeldEvents(options_.subject_prefix + "." + std::to_string(p), messages);
        l.pending = h.events > applied_unacked ? h.events - applied_unacked : 0;
        l.oldest_unapplied_age = l.pending > 0 ? h.oldest : Duration(0);
      }
    } else if (jerr != JSConsumerNotFoundErr) {
      return FromNats(s, "consumer info " + durable, jerr);
    } else {
      l.pending = l.published > l.applied ? l.published - l.applied : 0;
      if (l.pending > 0) {
        l.oldest_unapplied_age =
            HeldEvents(options_.subject_prefix + "." + std::to_string(p), 1).oldest;
      }
    }
    out.push_back(l);
  }
  return out;
}

}  // namespace

std::unique_ptr<EventBus> NewNatsBus(std::string url, const BusOptions& options,
                                     store::StateStore& store, const Clock& clock) {
  return std::make_unique<NatsBus>(std::move(url), options, store, clock);
}

}  // namespace apollo::bus
