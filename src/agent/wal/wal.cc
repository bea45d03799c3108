#include "agent/wal/wal.h"

#include <algorithm>

#include "agent/wal/record.h"

namespace apollo::wal {
namespace {

// Counts a thread inside an append call for the leader's gathering (see
// Wal::GatherLocked).
class AppenderScope {
 public:
  explicit AppenderScope(std::atomic<uint64_t>& n) : n_(n) { n_.fetch_add(1); }
  ~AppenderScope() { n_.fetch_sub(1); }
  AppenderScope(const AppenderScope&) = delete;
  AppenderScope& operator=(const AppenderScope&) = delete;

 private:
  std::atomic<uint64_t>& n_;
};

// Whether a leader gathers the other appenders' records before cutting
// (Wal::GatherLocked). Kept: in bench/wal_bench (2026-12-01, paired rounds on
// a loaded 2-core machine) without it 16 and 256 writers issued ~2x the
// fdatasyncs for no more records/s, and 256 writers' p50 latency was higher;
// a lone appender never gathers, so it costs nothing there.
constexpr bool kGather = true;
// Gathering never waits longer than this, whatever the disk does.
constexpr auto kMaxGather = std::chrono::milliseconds(2);
constexpr auto kGatherPoll = std::chrono::microseconds(50);

}  // namespace

// One group commit: everything queued when the leader cut it (the bytes
// are in write_buf_).
struct Wal::Batch {
  std::string_view data;
  uint64_t id = 0;
  uint64_t records = 0;
  uint64_t max_event_seq = 0;
  bool checkpoint = false;
  uint64_t last_seq = 0;  // high-water seq when the batch was cut
  uint64_t acked = 0;     // acked watermark when the batch was cut
};

Result<std::unique_ptr<Wal>> Wal::Open(const std::string& dir, const WalOptions& options,
                                       const Clock& clock) {
  if (options.segment_size == 0) {
    return Status::InvalidArgument("segment_size must be > 0");
  }
  if (options.retention.count() < 0) {
    return Status::InvalidArgument("negative retention");
  }
  APOLLO_RETURN_IF_ERROR(CreateDirs(dir));
  Result<UniqueFd> lock = LockFile(JoinPath(dir, "LOCK"));
  if (!lock.ok()) {
    return lock.status();
  }
  Result<RecoveredLog> log = RecoverLog(dir);
  if (!log.ok()) {
    return log.status().WithPrefix("WAL " + dir);
  }
  if (!options.archive_dir.empty()) {
    APOLLO_RETURN_IF_ERROR(CreateDirs(options.archive_dir));
  }
  uint64_t next_index = log->segments.empty() ? 1 : log->segments.back().index + 1;
  // `new` because the constructor is private; ownership passes at once.
  std::unique_ptr<Wal> wal(new Wal(dir, options, clock, std::move(*log)));
  wal->lock_fd_ = std::move(*lock);
  std::string prefix;
  APOLLO_RETURN_IF_ERROR(wal->StartSegment(next_index, wal->last_seq_, wal->acked_seq_, &prefix));
  APOLLO_RETURN_IF_ERROR(
      PwriteAll(wal->active_fd_.get(), prefix.data(), prefix.size(), 0, wal->active_path_));
  APOLLO_RETURN_IF_ERROR(DataSync(wal->active_fd_.get(), wal->active_path_));
  wal->active_size_ = prefix.size();
  wal->active_end_ = prefix.size();
  {
    std::lock_guard<std::mutex> l(wal->mu_);
    wal->segments_.back().size = prefix.size();
  }
  return wal;
}

Wal::Wal(std::string dir, const WalOptions& options, const Clock& clock, RecoveredLog log)
    : dir_(std::move(dir)),
      options_(options),
      clock_(clock),
      report_(std::move(log.report)),
      recovered_(std::move(log.state)),
      last_seq_(recovered_.last_seq),
      acked_seq_(recovered_.acked_seq),
      durable_acked_seq_(recovered_.acked_seq),
      segments_(std::move(log.segments)),
      checkpoint_segment_(log.checkpoint_segment),
      written_last_seq_(recovered_.last_seq) {}

Wal::~Wal() { (void)Close(); }

Status Wal::Close() {
  std::lock_guard<std::mutex> c(close_mu_);
  if (!closed_) {
    {
      std::lock_guard<std::mutex> l(mu_);
      closing_ = true;  // from here on nothing is queued
    }
    // After the write in progress, if any: everything still queued (lazy
    // ACKs, records of calls racing with us) goes in one last batch, and
    // kLeaderBit stays set, so nothing is written after it.
    AcquireLeadership();
    const uint64_t published = LeadCommit(/*closing=*/true);
    if ((published & kFailedBit) == 0) {
      DropPreallocated();  // a closed log ends at its last record
    }
    active_fd_ = UniqueFd();
    lock_fd_ = UniqueFd();  // closing the descriptor releases the flock
    closed_ = true;
  }
  std::lock_guard<std::mutex> l(mu_);
  return failed_;
}

Status Wal::StartSegment(uint64_t index, uint64_t last_seq, uint64_t acked, std::string* prefix) {
  std::string path = JoinPath(dir_, SegmentFileName(index));
  Result<UniqueFd> fd = CreateNewFile(path);
  if (!fd.ok()) {
    return fd.status();
  }
  // The new name must be durable before anything in it is acknowledged.
  APOLLO_RETURN_IF_ERROR(SyncDir(dir_));
  active_fd_ = std::move(*fd);
  active_path_ = std::move(path);
  active_index_ = index;
  active_size_ = 0;
  active_end_ = 0;
  AppendRecord(prefix, RecordType::kSegmentHeader, last_seq,
               EncodeSegmentHeader({index, last_seq, acked}));
  std::lock_guard<std::mutex> l(mu_);
  segments_.push_back({index, 0, 0});
  return Status::Ok();
}

RecoveredState Wal::TakeRecoveredState() {
  std::lock_guard<std::mutex> l(mu_);
  RecoveredState out = std::move(recovered_);
  recovered_ = RecoveredState{};
  return out;
}

Status Wal::UsableLocked() const {
  if (!failed_.ok()) {
    return Status::FailedPrecondition("WAL failed: " + failed_.ToString());
  }
  if (closing_) {
    return Status::FailedPrecondition("WAL closed");
  }
  return Status::Ok();
}

uint64_t Wal::EnqueueLocked(RecordType type, uint64_t seq, std::string_view payload) {
  AppendRecord(&pending_, type, seq, payload);
  ++pending_records_;
  return pending_batch_;
}

void Wal::AppenderQueuedLocked() {
  ++pending_appenders_;
  if (gathering_ && pending_appenders_ >= appenders_.load()) {
    gather_cv_.notify_one();
  }
}

Status Wal::WaitDurable(std::unique_lock<std::mutex>& lock, uint64_t batch) {
  lock.unlock();
  uint64_t s = state_.load(std::memory_order_acquire);
  for (;;) {
    if ((s >> kBatchShift) >= batch) {
      return Status::Ok();
    }
    if ((s & kFailedBit) != 0) {
      break;
    }
    if ((s & kLeaderBit) == 0) {
      // The CAS succeeds only on this exact state: no write in progress and
      // `batch` not durable, so our record is still queued and we write it.
      if (state_.compare_exchange_weak(s, s | kLeaderBit, std::memory_order_acquire)) {
        s = LeadCommit(/*closing=*/false);
      }
      continue;  // a failed CAS reloaded s
    }
    state_.wait(s, std::memory_order_acquire);
    s = state_.load(std::memory_order_acquire);
  }
  std::lock_guard<std::mutex> l(mu_);
  return Status::FailedPrecondition("WAL failed: " + failed_.ToString());
}

void Wal::AcquireLeadership() {
  uint64_t s = state_.load(std::memory_order_acquire);
  for (;;) {
    if ((s & kLeaderBit) == 0) {
      if (state_.compare_exchange_weak(s, s | kLeaderBit, std::memory_order_acquire)) {
        return;
      }
      continue;
    }
    state_.wait(s, std::memory_order_acquire);
    s = state_.load(std::memory_order_acquire);
  }
}

Result<uint64_t> Wal::Submit(RecordType type, std::string_view payload) {
  if (payload.size() > kMaxPayloadSize) {
    return Status::InvalidArgument("WAL record payload exceeds kMaxPayloadSize");
  }
  AppenderScope scope(appenders_);
  std::unique_lock<std::mutex> l(mu_);
  APOLLO_RETURN_IF_ERROR(UsableLocked());
  uint64_t seq = last_seq_;
  if (type == RecordType::kCheckpoint) {
    pending_checkpoint_ = true;
  }
  uint64_t batch = EnqueueLocked(type, seq, payload);
  AppenderQueuedLocked();
  APOLLO_RETURN_IF_ERROR(WaitDurable(l, batch));
  return seq;
}

Result<uint64_t> Wal::Append(RecordType type, std::string_view payload) {
  uint8_t t = static_cast<uint8_t>(type);
  if (type != RecordType::kClaim && type != RecordType::kState && t < kFirstUserRecordType) {
    return Status::InvalidArgument("Append takes CLAIM, STATE or a user record type, not " +
                                   std::to_string(t));
  }
  return Submit(type, payload);
}

Result<uint64_t> Wal::AppendEvent(Event event) {
  std::vector<Event> one;
  one.push_back(std::move(event));
  auto seqs = AppendEvents(std::move(one));
  if (!seqs.ok()) return seqs.status();
  return seqs->front();
}

Status Wal::PrepareEvents(std::vector<Event>& events) const {
  for (Event& event : events) {
    if (!options_.node_id.empty()) {
      if (event.node_id.empty()) {
        event.node_id = options_.node_id;
      }
      if (event.node_id != options_.node_id) {
        return Status::InvalidArgument("event of node " + event.node_id + " in the WAL of node " +
                                       options_.node_id);
      }
    }
    if (event.timestamp == TimePoint{}) {
      event.timestamp = clock_.Now();
    }
    event.sequence_number = 1;  // placeholder: the real one is assigned below
    APOLLO_RETURN_IF_ERROR(ValidateEvent(event));
  }
  return Status::Ok();
}

Result<Wal::Queued> Wal::EnqueueEventsLocked(std::vector<Event>& events) {
  APOLLO_RETURN_IF_ERROR(UsableLocked());
  // Encoded first, so a too-large event fails the call with nothing queued.
  std::vector<std::string> encoded;
  encoded.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    events[i].sequence_number = last_seq_ + 1 + i;
    encoded.push_back(EncodeEvent(events[i]));
    if (encoded.back().size() > kMaxPayloadSize) {
      return Status::InvalidArgument("event too large");
    }
  }
  // Assigned and queued under one lock, so log order is seq order; all in
  // the same batch, so one fdatasync covers them.
  Queued q;
  q.seqs.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    uint64_t seq = events[i].sequence_number;
    last_seq_ = seq;
    pending_max_event_seq_ = seq;
    q.ticket = EnqueueLocked(RecordType::kEvent, seq, encoded[i]);
    q.seqs.push_back(seq);
  }
  return q;
}

Result<std::vector<uint64_t>> Wal::AppendEvents(std::vector<Event> events) {
  APOLLO_RETURN_IF_ERROR(PrepareEvents(events));
  if (events.empty()) return std::vector<uint64_t>{};
  AppenderScope scope(appenders_);
  std::unique_lock<std::mutex> l(mu_);
  Result<Queued> q = EnqueueEventsLocked(events);
  if (!q.ok()) return q.status();
  AppenderQueuedLocked();
  APOLLO_RETURN_IF_ERROR(WaitDurable(l, q->ticket));
  return std::move(q->seqs);
}

Result<Wal::Queued> Wal::QueueEvents(std::vector<Event> events) {
  APOLLO_RETURN_IF_ERROR(PrepareEvents(events));
  if (events.empty()) return Queued{};
  // Not counted in appenders_: a gathering leader does not wait for a
  // caller that will not wait for it; queued before the cut, it rides along.
  std::lock_guard<std::mutex> l(mu_);
  return EnqueueEventsLocked(events);
}

Status Wal::AwaitDurable(uint64_t ticket) {
  std::unique_lock<std::mutex> l(mu_);
  return WaitDurable(l, ticket);
}

void Wal::GatherLocked(std::unique_lock<std::mutex>& lock) {
  // steady_clock, not the injected Clock: this is a latency heuristic on a
  // real disk; no outcome depends on it, and a ManualClock would never let
  // the deadline pass. A lone appender (the leader itself) never waits.
  using Steady = std::chrono::steady_clock;
  const Steady::time_point deadline =
      Steady::now() + std::min<Steady::duration>(last_sync_time_, kMaxGather);
  gathering_ = true;
  while (!closing_ && pending_appenders_ < appenders_.load() && Steady::now() < deadline) {
    gather_cv_.wait_until(lock, std::min(deadline, Steady::now() + kGatherPoll));
  }
  gathering_ = false;
}

uint64_t Wal::LeadCommit(bool closing) {
  Batch b;
  Status s;
  {
    std::unique_lock<std::mutex> l(mu_);
    if (kGather && !closing) {
      GatherLocked(l);
    }
    s = failed_;
    if (pending_records_ > 0) {
      write_buf_.clear();
      write_buf_.swap(pending_);  // pending_ inherits the old buffer's capacity
      b.data = write_buf_;
      b.id = pending_batch_++;
      b.records = std::exchange(pending_records_, 0);
      pending_appenders_ = 0;
      b.max_event_seq = std::exchange(pending_max_event_seq_, 0);
      b.checkpoint = std::exchange(pending_checkpoint_, false);
      b.last_seq = last_seq_;
      b.acked = acked_seq_;
    }
  }
  // Written outside mu_: callers keep queueing for the next batch meanwhile.
  if (s.ok() && b.records > 0) {
    s = WriteBatch(b);
  }
  // Only the leader changes state_ (others CAS only a value without
  // kLeaderBit), so this is the current state.
  const uint64_t prev = state_.load(std::memory_order_relaxed);
  uint64_t next = prev & ~kLeaderBit;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (s.ok() && b.records > 0) {
      SegmentMeta& seg = segments_.back();
      seg.size = active_size_;
      seg.max_event_seq = std::max(seg.max_event_seq, b.max_event_seq);
      if (b.checkpoint) {
        checkpoint_segment_ = seg.index;
      }
      // Every ACK record up to b.acked was queued before this batch was cut.
      durable_acked_seq_ = std::max(durable_acked_seq_, b.acked);
      stats_.records += b.records;
      stats_.bytes += b.data.size();
      ++stats_.syncs;
      const double secs = std::chrono::duration<double>(last_sync_time_).count();
      stats_.sync_seconds += secs;
      ++stats_.sync_buckets[std::lower_bound(kWalSyncBuckets.begin(), kWalSyncBuckets.end(), secs) -
                            kWalSyncBuckets.begin()];
      next = b.id << kBatchShift;
    } else if (!s.ok()) {
      if (failed_.ok()) {
        failed_ = s;
      }
      next |= kFailedBit;
    }
  }
  if (closing) {
    next |= kLeaderBit;
  }
  state_.store(next, std::memory_order_release);
  state_.notify_all();
  return next;
}

void Wal::DropPreallocated() {
  // Space only: a reader takes a zero tail for a clean end anyway, so a
  // failure here costs nothing but the zeros.
  if (active_end_ > active_size_) {
    (void)TruncateFd(active_fd_.get(), active_size_, active_path_);
  }
}

Status Wal::WriteBatch(const Batch& batch) {
  std::string prefix;
  if (active_size_ >= options_.segment_size) {
    // The active segment is already synced (every batch is), so rotating
    // needs no extra fdatasync of the old file.
    DropPreallocated();
    APOLLO_RETURN_IF_ERROR(
        StartSegment(active_index_ + 1, written_last_seq_, batch.acked, &prefix));
  }
  uint64_t end = active_size_;
  if (!prefix.empty()) {
    APOLLO_RETURN_IF_ERROR(
        PwriteAll(active_fd_.get(), prefix.data(), prefix.size(), end, active_path_));
    end += prefix.size();
  }
  APOLLO_RETURN_IF_ERROR(
      PwriteAll(active_fd_.get(), batch.data.data(), batch.data.size(), end, active_path_));
  end += batch.data.size();
  if (end > active_end_) {
    // This batch grew the file: write the next chunk of zeros with it (one
    // fdatasync for both), so the batches after it overwrite space the file
    // has (kPreallocBytes). Never past the segment size: it rotates there.
    const uint64_t zeros_to =
        std::max(end, std::min<uint64_t>(end + kPreallocBytes, options_.segment_size));
    if (zeros_to > end) {
      APOLLO_RETURN_IF_ERROR(WriteZeros(active_fd_.get(), end, zeros_to, active_path_));
    }
    active_end_ = zeros_to;
  }
  auto sync_start = std::chrono::steady_clock::now();
  APOLLO_RETURN_IF_ERROR(sync_for_test_ ? sync_for_test_(active_fd_.get(), active_path_)
                                        : DataSync(active_fd_.get(), active_path_));
  last_sync_time_ = std::chrono::steady_clock::now() - sync_start;
  active_size_ = end;
  written_last_seq_ = batch.last_seq;
  return Status::Ok();
}

uint64_t Wal::last_seq() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_seq_;
}

uint64_t Wal::acked_seq() const {
  std::lock_guard<std::mutex> l(mu_);
  return acked_seq_;
}

WalStats Wal::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  WalStats s = stats_;
  s.segments = segments_.size();
  return s;
}

}  // namespace apollo::wal
