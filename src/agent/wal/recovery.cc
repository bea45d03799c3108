#include "agent/wal/recovery.h"

#include <algorithm>
#include <sstream>

#include "agent/wal/file_util.h"
#include "agent/wal/record.h"
#include "agent/wal/segment_reader.h"

namespace apollo::wal {

std::string RecoveryReport::ToString() const {
  std::ostringstream os;
  os << "segments=" << segments_read << " records=" << records_read
     << " truncated=" << bytes_truncated << " last_seq=" << last_seq << " acked=" << acked_seq
     << " corrupt=[";
  for (size_t i = 0; i < corrupt_regions.size(); ++i) {
    const CorruptRegion& r = corrupt_regions[i];
    os << (i ? " " : "") << r.segment << "@" << r.offset << "+" << r.length << " (" << r.reason
       << ")";
  }
  os << "]";
  return os.str();
}

namespace {

Result<std::vector<uint64_t>> ListSegments(const std::string& dir) {
  Result<std::vector<std::string>> names = ListDir(dir);
  if (!names.ok()) {
    return names.status();
  }
  std::vector<uint64_t> indexes;
  for (const std::string& n : *names) {
    if (std::optional<uint64_t> idx = ParseSegmentFileName(n)) {
      indexes.push_back(*idx);
    }
  }
  std::sort(indexes.begin(), indexes.end());
  return indexes;
}

// Folds one valid record into the recovered log.
void ApplyRecord(const ScannedRecord& r, SegmentMeta* seg, RecoveredLog* log) {
  RecoveredState& st = log->state;
  ++log->report.records_read;
  st.last_seq = std::max(st.last_seq, r.seq);
  switch (r.type) {
    case RecordType::kSegmentHeader:
      if (std::optional<SegmentHeader> h = DecodeSegmentHeader(r.payload)) {
        st.last_seq = std::max(st.last_seq, h->last_seq_before);
        st.acked_seq = std::max(st.acked_seq, h->acked_seq);
      }
      return;
    case RecordType::kAck:
      if (std::optional<uint64_t> acked = DecodeFixed64(r.payload)) {
        st.acked_seq = std::max(st.acked_seq, *acked);
      }
      return;
    case RecordType::kCheckpoint:
      st.checkpoint = std::string(r.payload);
      st.since_checkpoint.clear();
      log->checkpoint_segment = seg->index;
      return;
    case RecordType::kEvent:
      seg->max_event_seq = std::max(seg->max_event_seq, r.seq);
      break;
    default:
      break;
  }
  st.since_checkpoint.push_back({r.type, r.seq, std::string(r.payload)});
}

// Reads one segment; truncates its damaged tail if it is the newest.
Status RecoverSegment(const std::string& dir, uint64_t index, bool newest, RecoveredLog* log) {
  const std::string name = SegmentFileName(index);
  const std::string path = JoinPath(dir, name);
  Result<std::string> data = ReadFile(path);
  if (!data.ok()) {
    return data.status();
  }
  SegmentMeta seg{index, data->size(), 0};
  SegmentScan scan = ScanSegment(*data, [&](const ScannedRecord& r) { ApplyRecord(r, &seg, log); });
  ++log->report.segments_read;
  for (size_t i = 0; i < scan.damaged.size(); ++i) {
    const DamagedRange& d = scan.damaged[i];
    bool torn_tail = newest && scan.damaged_tail && i + 1 == scan.damaged.size();
    if (torn_tail) {
      continue;
    }
    log->report.corrupt_regions.push_back({name, d.offset, d.length, d.reason});
  }
  if (newest && scan.damaged_tail) {
    // Everything after the last valid record was never acknowledged as
    // durable (it was being written when the process or machine died).
    // Counted up to the last non-zero byte: the zeros preallocated past
    // the torn write held nothing (see Wal's kPreallocBytes).
    const size_t last = data->find_last_not_of('\0');
    const uint64_t written = last == std::string::npos ? 0 : last + 1;
    log->report.bytes_truncated = std::max(written, scan.valid_end) - scan.valid_end;
    APOLLO_RETURN_IF_ERROR(TruncateFile(path, scan.valid_end));
    seg.size = scan.valid_end;
  } else if (scan.zero_tail) {
    // Zeros the writer preallocated past the log's end: nothing lost. The
    // newest segment is cut to its records, as a clean Close leaves it.
    seg.size = scan.valid_end;
    if (newest) {
      APOLLO_RETURN_IF_ERROR(TruncateFile(path, scan.valid_end));
    }
  }
  if (newest && seg.size == 0) {
    return RemoveFile(path);  // a segment created, never written
  }
  log->segments.push_back(seg);
  return Status::Ok();
}

}  // namespace

Result<RecoveredLog> RecoverLog(const std::string& dir) {
  APOLLO_RETURN_IF_ERROR(CreateDirs(dir));
  Result<std::vector<uint64_t>> indexes = ListSegments(dir);
  if (!indexes.ok()) {
    return indexes.status();
  }
  RecoveredLog log;
  for (size_t i = 0; i < indexes->size(); ++i) {
    bool newest = i + 1 == indexes->size();
    APOLLO_RETURN_IF_ERROR(RecoverSegment(dir, (*indexes)[i], newest, &log));
  }
  // Seqs up to an acked watermark were used, even if their records were lost:
  // never hand them out again (the store would drop them as duplicates).
  log.state.last_seq = std::max(log.state.last_seq, log.state.acked_seq);
  log.report.last_seq = log.state.last_seq;
  log.report.acked_seq = log.state.acked_seq;
  return log;
}

}  // namespace apollo::wal
