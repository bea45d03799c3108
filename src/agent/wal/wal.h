#pragma once

// The edge agent's write-ahead log: durable, checksummed records in segment
// files under one directory, with group commit, crash recovery, per-node
// sequence numbers, acknowledgement and retention. Format and recovery rules:
// docs/wal_format.md.
//
// Durability: every Append*/MarkAcked/AdvanceTo/Checkpoint call blocks until
// its record has been written and fdatasync'ed; when it returns OK the record
// survives a crash of the process or the machine. The one exception is
// QueueEvents, which queues without waiting; its caller waits later, with
// AwaitDurable, before it may report those events. There are no completion
// callbacks: callers that must not block append from their own thread.
//
// Group commit is leader/follower, with no writer thread: a caller queues its
// record and, if no write is in progress, becomes the leader: it cuts the
// batch of everything queued (its own record, other callers' and lazy ACK
// records), writes it with one write(2), fdatasyncs, publishes the progress
// and wakes the waiters. Callers that queue while a write is in progress wait;
// when it ends, one of those whose record is still not durable becomes the
// next leader and writes the next batch. So N concurrent callers share one
// fdatasync, and a lone caller writes its own record with no thread hand-off.
// Log order is seq order (seqs are assigned and queued under one lock, and
// batches are written one at a time, in the order they were cut).
//
// Errors: no exceptions. Open fails only on real I/O errors (permission
// denied, not a directory, ...), never on damaged contents: damage is
// reported in recovery_report(). A failed write or fdatasync makes the Wal
// unusable (every later call returns FailedPrecondition carrying the first
// error): after a failed fsync the kernel may have dropped the dirty pages,
// so retrying cannot be trusted; reopen the directory to recover.
//
// Thread-safety: every public method is safe to call concurrently. Only one
// Wal may use a directory at a time: Open takes an exclusive flock on
// "<dir>/LOCK" (released by Close, or by the kernel when the process dies)
// and fails with FailedPrecondition while another Wal holds it.

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "agent/wal/file_util.h"
#include "agent/wal/recovery.h"
#include "agent/wal/wal_format.h"
#include "core/clock.h"
#include "core/event.h"
#include "core/status.h"

namespace apollo::wal {

struct WalOptions {
  // A segment is closed and a new one started once it reaches this size.
  uint64_t segment_size = kDefaultSegmentSize;
  // How long a segment that became removable (all its events acked, and
  // older than the last checkpoint) is kept before removal. 0: at once.
  // Measured on the injected Clock from when this process first saw it
  // removable, so a restart restarts the wait (errs on keeping).
  Duration retention = std::chrono::hours(24 * 7);
  // Empty: removable segments are deleted. Otherwise they are renamed into
  // this directory (created if missing; must be on the same filesystem).
  std::string archive_dir;
  // true: segments are removable only once older than the segment holding
  // the last checkpoint (their state records are covered by it). false: acks
  // alone decide (for users that keep no state in the log).
  bool require_checkpoint = true;
  // If set, AppendEvent fills an empty Event::node_id with it and rejects
  // events of any other node (seqs are per node: one WAL per node).
  std::string node_id;
};

// Zeros written ahead of the log in the active segment (never past the
// segment size). A batch that overwrites space the file already has leaves
// its size alone, so its fdatasync writes the data and no inode (on a
// journalling filesystem: no journal commit). The file grows once a chunk:
// that batch writes the next chunk of zeros too. Measured in BENCHMARKS.md
// ("the WAL's preallocated zeros"): one writer's append p50 97-107 us
// instead of 136-157, 16 writers' records/s up 20-40 %. docs/wal_format.md,
// "Preallocation".
inline constexpr uint64_t kPreallocBytes = 1 << 20;

// Upper bounds, in seconds, of WalStats' fdatasync duration buckets.
inline constexpr std::array<double, 12> kWalSyncBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0};

struct WalStats {
  uint64_t records = 0;   // records appended since Open (segment headers excluded)
  uint64_t bytes = 0;     // bytes written since Open
  uint64_t syncs = 0;     // fdatasync calls since Open (group commits)
  uint64_t segments = 0;  // live segment files
  // The batches' fdatasyncs by duration: sync_buckets[i] counts those up to
  // kWalSyncBuckets[i] (and above the bound before); the last, the rest.
  std::array<uint64_t, kWalSyncBuckets.size() + 1> sync_buckets{};
  double sync_seconds = 0;  // time spent in them
};

class Wal final {
 public:
  // Recovers `dir` (created if missing) and starts a new segment for
  // appends. `clock` must outlive the Wal. Errors: FailedPrecondition if
  // the directory is in use; I/O errors (PermissionDenied, Unavailable, ...).
  static Result<std::unique_ptr<Wal>> Open(const std::string& dir, const WalOptions& options,
                                           const Clock& clock);

  // Close(): writes what is still queued (lazy ACK records), then releases
  // the directory. No call may be in progress or start during destruction.
  ~Wal();
  Wal(const Wal&) = delete;
  Wal& operator=(const Wal&) = delete;

  // What Open found: records read, bytes truncated, corrupt regions.
  const RecoveryReport& recovery_report() const { return report_; }

  // The replay state found by Open (checkpoint, records since it, seqs).
  // Moves it out: the second call returns an empty state.
  RecoveredState TakeRecoveredState();

  // Appends an opaque record of `type` (kClaim, kState or a user type >=
  // kFirstUserRecordType) and waits until it is durable. Returns the record's
  // seq field (the highest event seq assigned so far). InvalidArgument for
  // the types with their own method (EVENT, CHECKPOINT, ACK, segment header)
  // or a payload over kMaxPayloadSize.
  Result<uint64_t> Append(RecordType type, std::string_view payload);

  // Assigns the next sequence number to `event` (its sequence_number is
  // ignored; an empty node_id is filled from WalOptions::node_id and a zero
  // timestamp from the Clock), encodes it with apollo::EncodeEvent, and waits until durable.
  // Returns the assigned seq; the event id is MakeEventId(node_id, seq).
  // Seqs are strictly increasing across restarts. InvalidArgument if the
  // event fails ValidateEvent or names a node other than WalOptions::node_id.
  Result<uint64_t> AppendEvent(Event event);

  // AppendEvent for several events at once: consecutive seqs, queued under
  // one lock and made durable by one group commit (one fdatasync for the
  // lot), returned in order. All or nothing: an invalid event fails the
  // call before anything is queued.
  Result<std::vector<uint64_t>> AppendEvents(std::vector<Event> events);

  // AppendEvents without waiting for the disk: the events get their seqs
  // and are queued for the next group commit, which whoever leads next
  // writes (any later append, AwaitDurable, or Close). For a caller that has
  // other work to do while the disk syncs (the executor's worker starts the
  // next task). Nothing of them is durable, so nothing may be reported,
  // until AwaitDurable(ticket) returns OK. Errors as AppendEvents.
  struct Queued {
    std::vector<uint64_t> seqs;
    uint64_t ticket = 0;
  };
  Result<Queued> QueueEvents(std::vector<Event> events);

  // Returns once the records queued under `ticket` (QueueEvents) are
  // durable, writing them itself when no write is in progress.
  // FailedPrecondition if the WAL failed before they were.
  Status AwaitDurable(uint64_t ticket);

  // The center durably stored every event up to `seq`. Logs the watermark
  // (durably) and removes segments that became removable (see WalOptions).
  // A watermark at or below the current one is a no-op; InvalidArgument if
  // `seq` exceeds the last assigned seq. An error from removing segments is
  // returned after the ack itself is durable; retrying is harmless.
  Status MarkAcked(uint64_t seq);

  // MarkAcked without waiting for the disk: acked_seq() rises at once and
  // the ACK record rides along with the next group commit (or Close); it
  // never makes a write or fdatasync of its own. Safe because an ack is only an
  // optimisation: if a crash forgets it, the events above the durable
  // watermark are resent on reconnect and the store deduplicates them by
  // event_id. Segments are removed only on the strength of a durable ack.
  Status MarkAckedLazy(uint64_t seq);

  // The center durably holds this node's events up to `seq`, more than this
  // log knows (the log was lost or wiped while the store kept them):
  // numbering continues above `seq`, so new events are never mistaken for
  // duplicates, and everything up to `seq` counts as acknowledged. Durable
  // on return (an ACK record, which recovery reads as both watermarks). A
  // `seq` at or below last_seq() is a no-op.
  Status AdvanceTo(uint64_t seq);

  // Writes a CHECKPOINT record of `snapshot` (durably): replay after a
  // restart starts from it, and older segments become removable once acked.
  // InvalidArgument if the snapshot exceeds kMaxPayloadSize (16 MiB).
  Status Checkpoint(std::string_view snapshot);

  // Durable events with seq > acked_seq(), in seq order, read from the
  // segment files. Events in corrupt regions are missing (they were reported
  // at Open); checksummed bytes that do not decode are skipped likewise.
  Result<std::vector<Event>> ReadUnacked() const;

  // Like ReadUnacked but bounded, for resending in chunks: durable events
  // with seq > after_seq (and > acked_seq()), at most max_events of them.
  Result<std::vector<Event>> ReadEventsAfter(uint64_t after_seq, size_t max_events) const;

  // Removes (or archives) segments whose retention has expired. Called by
  // MarkAcked and Checkpoint; call it periodically when retention > 0.
  Status RemoveObsoleteSegments();

  uint64_t last_seq() const;
  uint64_t acked_seq() const;
  WalStats stats() const;

  // Waits for a write in progress, writes what is still queued (lazy ACK
  // records, and the records of calls racing with Close, which then return
  // OK), closes the segment and releases the flock. Returns the first write
  // error, if any. Later calls fail with FailedPrecondition and write
  // nothing. Idempotent.
  Status Close();

 private:
  friend class WalTestPeer;  // wal_group_commit_test.cc: fails the batch fdatasync
  struct Batch;
  Wal(std::string dir, const WalOptions& options, const Clock& clock, RecoveredLog log);

  // Creates segment `index`, makes it the active one and appends its header
  // record to *prefix (written with the next batch). The leader or Open.
  Status StartSegment(uint64_t index, uint64_t last_seq, uint64_t acked, std::string* prefix);
  // Queues a framed record; returns the batch id it will be written in.
  // Requires mu_ held and UsableLocked() OK.
  uint64_t EnqueueLocked(RecordType type, uint64_t seq, std::string_view payload);
  // An appender (counted in appenders_) has queued all its records: may end
  // the leader's gathering. Requires mu_ held.
  void AppenderQueuedLocked();
  // Fills in and checks `events` for AppendEvents/QueueEvents (no lock).
  Status PrepareEvents(std::vector<Event>& events) const;
  // Assigns seqs to `events` and queues them; returns the seqs and the batch
  // id they will be written in. Requires mu_ held.
  Result<Queued> EnqueueEventsLocked(std::vector<Event>& events);
  // Queues a framed record and waits for its group commit.
  Result<uint64_t> Submit(RecordType type, std::string_view payload);
  // Releases `lock` (mu_) and returns once batch `batch` is durable (OK) or
  // the WAL failed (FailedPrecondition), leading the writes itself whenever
  // no write is in progress. Returns without mu_ held.
  Status WaitDurable(std::unique_lock<std::mutex>& lock, uint64_t batch);
  // Sets kLeaderBit in state_, waiting while another thread holds it.
  void AcquireLeadership();
  // Called holding kLeaderBit: cuts the batch of everything queued, writes
  // and fdatasyncs it, publishes progress (or the failure) in state_ and
  // wakes the waiters. Releases kLeaderBit, except when `closing` (Close:
  // nothing may be written after its last batch). Returns the published state.
  uint64_t LeadCommit(bool closing);
  // Before cutting a batch, the leader waits (briefly, bounded by the last
  // fdatasync's duration) until every thread inside an append call has
  // queued its record, so concurrent appenders share one fdatasync instead
  // of splitting into two alternating cohorts. Requires mu_ held (`lock`).
  void GatherLocked(std::unique_lock<std::mutex>& lock);
  Status WriteBatch(const Batch& batch);
  // Cuts the active segment's preallocated zeros off (leaving a segment, or
  // closing). Called holding kLeaderBit.
  void DropPreallocated();
  Status UsableLocked() const;
  // The checks both MarkAcked flavours share: the WAL is usable and `seq`
  // was assigned. False: nothing to do (at or below the watermark).
  Result<bool> AckAdvancesLocked(uint64_t seq) const;
  Status RemoveSegmentFiles(const std::vector<uint64_t>& indexes);

  const std::string dir_;
  const WalOptions options_;
  const Clock& clock_;
  RecoveryReport report_;

  mutable std::mutex mu_;
  std::condition_variable gather_cv_;   // a gathering leader waits here (with mu_)
  RecoveredState recovered_;            // guarded by mu_
  std::string pending_;                 // guarded by mu_: framed records not yet written
  uint64_t pending_records_ = 0;        // guarded by mu_
  // Calls counted in appenders_ whose records are all in pending_.
  uint64_t pending_appenders_ = 0;      // guarded by mu_
  bool gathering_ = false;              // guarded by mu_: the leader waits in GatherLocked
  uint64_t pending_max_event_seq_ = 0;  // guarded by mu_
  bool pending_checkpoint_ = false;     // guarded by mu_
  uint64_t pending_batch_ = 1;          // guarded by mu_: id the queued records will get
  // The group-commit state, one word so that a waiter sees progress and
  // leadership change together: bits 2..63 the highest batch id written and
  // synced; kFailedBit once a write or fdatasync failed; kLeaderBit while a
  // thread leads (cuts, writes, publishes). Leadership is taken by CAS from a
  // value without kLeaderBit and dropped by the leader's single store of the
  // next value; every change is followed by notify_all, so waiters block in
  // std::atomic::wait (no mutex hand-off per waiter) and never miss one.
  static constexpr uint64_t kLeaderBit = 1;
  static constexpr uint64_t kFailedBit = 2;
  static constexpr int kBatchShift = 2;
  std::atomic<uint64_t> state_{0};
  // Threads currently inside Append/AppendEvent(s)/Checkpoint.
  std::atomic<uint64_t> appenders_{0};
  uint64_t last_seq_ = 0;                          // guarded by mu_
  uint64_t acked_seq_ = 0;                         // guarded by mu_
  // The highest ack whose record is durable (acked_seq_ may be ahead of it
  // after MarkAckedLazy); what segment removal goes by.
  uint64_t durable_acked_seq_ = 0;                 // guarded by mu_
  std::vector<SegmentMeta> segments_;              // guarded by mu_; back() is the active one
  uint64_t checkpoint_segment_ = 0;                // guarded by mu_
  std::map<uint64_t, TimePoint> removable_since_;  // guarded by mu_
  Status failed_;                                  // guarded by mu_: first write error
  bool closing_ = false;                           // guarded by mu_
  WalStats stats_;                                 // guarded by mu_ (segments computed on read)

  std::mutex gc_mu_;     // serialises RemoveObsoleteSegments
  std::mutex close_mu_;  // serialises Close
  bool closed_ = false;  // guarded by close_mu_

  UniqueFd lock_fd_;  // holds the directory's flock; set by Open, reset by Close

  // Owned by whichever thread holds kLeaderBit (Open, before any call; then
  // the leaders in turn, each handing over through state_'s release/acquire).
  UniqueFd active_fd_;
  std::string active_path_;
  uint64_t active_index_ = 0;
  uint64_t active_size_ = 0;  // the log's bytes in the active segment
  uint64_t active_end_ = 0;   // the file's size: active_size_ plus preallocated zeros
  uint64_t written_last_seq_ = 0;
  std::string write_buf_;  // the batch being written; swapped with pending_ to keep capacity
  std::chrono::steady_clock::duration last_sync_time_{};  // the last batch fdatasync's duration
  // Tests only (WalTestPeer): replaces the batch fdatasync. Empty in the
  // product; set before any call.
  std::function<Status(int fd, const std::string& path)> sync_for_test_;
};

}  // namespace apollo::wal
