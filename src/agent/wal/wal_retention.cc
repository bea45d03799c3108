// The read-back and removal half of Wal: acks, checkpoints, retention and
// ReadUnacked. The append/group-commit half is in wal.cc.

#include <algorithm>
#include <cstdint>

#include "agent/wal/record.h"
#include "agent/wal/segment_reader.h"
#include "agent/wal/wal.h"

namespace apollo::wal {

Result<bool> Wal::AckAdvancesLocked(uint64_t seq) const {
  APOLLO_RETURN_IF_ERROR(UsableLocked());
  if (seq > last_seq_) {
    return Status::InvalidArgument("ack of seq " + std::to_string(seq) +
                                   " beyond the last assigned seq " + std::to_string(last_seq_));
  }
  return seq > acked_seq_;
}

Status Wal::MarkAcked(uint64_t seq) {
  {
    std::unique_lock<std::mutex> l(mu_);
    Result<bool> advances = AckAdvancesLocked(seq);
    if (!advances.ok()) return advances.status();
    if (!*advances) return Status::Ok();
    uint64_t batch = EnqueueLocked(RecordType::kAck, last_seq_, EncodeFixed64(seq));
    APOLLO_RETURN_IF_ERROR(WaitDurable(l, batch));
    l.lock();
    // Raised only once the ack is durable, so no segment is removed on the
    // strength of an ack a crash could forget.
    acked_seq_ = std::max(acked_seq_, seq);
    durable_acked_seq_ = std::max(durable_acked_seq_, seq);
  }
  return RemoveObsoleteSegments();
}

Status Wal::MarkAckedLazy(uint64_t seq) {
  {
    std::lock_guard<std::mutex> l(mu_);
    Result<bool> advances = AckAdvancesLocked(seq);
    if (!advances.ok()) return advances.status();
    if (!*advances) return Status::Ok();
    // Queued with no caller waiting for it, so it never makes a leader: the
    // next leader's batch (or Close's) carries it. Raised now, under the same
    // lock, so any batch cut from here on carries the record (the leader's
    // durable_acked_seq_ relies on it).
    AppendRecord(&pending_, RecordType::kAck, last_seq_, EncodeFixed64(seq));
    ++pending_records_;
    acked_seq_ = seq;
  }
  return RemoveObsoleteSegments();
}

Status Wal::AdvanceTo(uint64_t seq) {
  std::unique_lock<std::mutex> l(mu_);
  APOLLO_RETURN_IF_ERROR(UsableLocked());
  if (seq <= last_seq_) return Status::Ok();
  last_seq_ = seq;
  uint64_t batch = EnqueueLocked(RecordType::kAck, last_seq_, EncodeFixed64(seq));
  APOLLO_RETURN_IF_ERROR(WaitDurable(l, batch));
  l.lock();
  acked_seq_ = std::max(acked_seq_, seq);
  durable_acked_seq_ = std::max(durable_acked_seq_, seq);
  return Status::Ok();
}

Status Wal::Checkpoint(std::string_view snapshot) {
  Result<uint64_t> r = Submit(RecordType::kCheckpoint, snapshot);
  if (!r.ok()) {
    return r.status();
  }
  return RemoveObsoleteSegments();
}

Status Wal::RemoveObsoleteSegments() {
  std::lock_guard<std::mutex> g(gc_mu_);
  std::vector<uint64_t> doomed;
  {
    std::lock_guard<std::mutex> l(mu_);
    const TimePoint now = clock_.Now();
    bool expired_prefix = true;
    // Only a prefix goes, never the active (last) segment: replay stays a
    // contiguous run of segments.
    for (size_t i = 0; i + 1 < segments_.size(); ++i) {
      const SegmentMeta& s = segments_[i];
      bool removable = s.max_event_seq <= durable_acked_seq_ &&
                       (!options_.require_checkpoint || s.index < checkpoint_segment_);
      if (!removable) {
        break;
      }
      auto it = removable_since_.emplace(s.index, now).first;
      expired_prefix = expired_prefix && now - it->second >= options_.retention;
      if (expired_prefix) {
        doomed.push_back(s.index);
      }
    }
    segments_.erase(segments_.begin(), segments_.begin() + static_cast<long>(doomed.size()));
    for (uint64_t index : doomed) {
      removable_since_.erase(index);
    }
  }
  return RemoveSegmentFiles(doomed);
}

Status Wal::RemoveSegmentFiles(const std::vector<uint64_t>& indexes) {
  if (indexes.empty()) {
    return Status::Ok();
  }
  for (uint64_t index : indexes) {
    std::string name = SegmentFileName(index);
    std::string from = JoinPath(dir_, name);
    Status s = options_.archive_dir.empty()
                   ? RemoveFile(from)
                   : RenameFile(from, JoinPath(options_.archive_dir, name));
    // Oldest first, so a failure leaves a contiguous log; the file is
    // found again at the next Open.
    if (!s.ok() && s.code() != StatusCode::kNotFound) {
      return s;
    }
  }
  if (!options_.archive_dir.empty()) {
    APOLLO_RETURN_IF_ERROR(SyncDir(options_.archive_dir));
  }
  return SyncDir(dir_);
}

Result<std::vector<Event>> Wal::ReadUnacked() const { return ReadEventsAfter(0, SIZE_MAX); }

Result<std::vector<Event>> Wal::ReadEventsAfter(uint64_t after_seq, size_t max_events) const {
  std::vector<SegmentMeta> segments;
  {
    std::lock_guard<std::mutex> l(mu_);
    after_seq = std::max(after_seq, acked_seq_);
    for (const SegmentMeta& s : segments_) {
      if (s.max_event_seq > after_seq) {
        segments.push_back(s);
      }
    }
  }
  std::vector<Event> events;
  for (const SegmentMeta& s : segments) {
    if (events.size() >= max_events) {
      break;
    }
    // Only the durable prefix: a leader may be appending past it.
    Result<std::string> data = ReadFile(JoinPath(dir_, SegmentFileName(s.index)), s.size);
    if (!data.ok() && data.status().code() == StatusCode::kNotFound) {
      continue;  // acked since
    }
    if (!data.ok()) {
      return data.status();
    }
    ScanSegment(*data, [&](const ScannedRecord& r) {
      if (r.type != RecordType::kEvent || r.seq <= after_seq || events.size() >= max_events) {
        return;
      }
      // Checksummed bytes that do not decode would be a writer bug; they
      // cannot be resent, so they are skipped like a corrupt record.
      Result<Event> e = DecodeEvent(r.payload);
      if (e.ok()) {
        events.push_back(std::move(*e));
      }
    });
  }
  return events;
}

}  // namespace apollo::wal
