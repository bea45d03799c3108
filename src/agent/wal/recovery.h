#pragma once

// Recovery of a WAL directory: reads every segment in index order, truncates
// a torn tail of the newest segment, reports damaged regions elsewhere as
// data loss (and skips them), and rebuilds what the writer needs to resume.
// Rules: docs/wal_format.md, "Recovery".
//
// Thread-safety: a free function; the caller must ensure no other process or
// Wal uses `dir` at the same time.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/wal/wal_format.h"
#include "core/status.h"

namespace apollo::wal {

// A region of a segment that held no valid record: data loss.
struct CorruptRegion {
  std::string segment;  // file name within the WAL directory
  uint64_t offset = 0;  // byte offset within the segment
  uint64_t length = 0;
  std::string reason;
};

struct RecoveryReport {
  uint64_t segments_read = 0;
  uint64_t records_read = 0;     // valid records, segment headers included
  uint64_t bytes_truncated = 0;  // torn tail removed from the newest segment
  std::vector<CorruptRegion> corrupt_regions;
  uint64_t last_seq = 0;   // highest seq ever assigned, as recovered
  uint64_t acked_seq = 0;  // acked watermark, as recovered

  bool data_loss() const { return !corrupt_regions.empty(); }
  // One line for logs: "segments=3 records=120 truncated=17 corrupt=[wal-...log@4096+80 ...]".
  std::string ToString() const;
};

// One record handed back to the caller.
struct WalRecord {
  RecordType type = RecordType::kState;
  uint64_t seq = 0;  // EVENT: the event's seq; other types: the high-water seq
  std::string payload;

  friend bool operator==(const WalRecord&, const WalRecord&) = default;
};

// What the agent replays after a restart.
struct RecoveredState {
  uint64_t last_seq = 0;
  uint64_t acked_seq = 0;
  // The payload of the last CHECKPOINT record, if any.
  std::optional<std::string> checkpoint;
  // Every EVENT, CLAIM, STATE and user-typed record after that checkpoint
  // (all of them if there is none), in log order. Internal records
  // (segment headers, acks) are left out.
  std::vector<WalRecord> since_checkpoint;
};

// In-memory description of one segment file.
struct SegmentMeta {
  uint64_t index = 0;
  uint64_t size = 0;           // durable bytes
  uint64_t max_event_seq = 0;  // 0 if the segment holds no EVENT record
};

struct RecoveredLog {
  RecoveryReport report;
  RecoveredState state;
  std::vector<SegmentMeta> segments;  // surviving segments, index order
  uint64_t checkpoint_segment = 0;    // index holding the last checkpoint; 0: none
};

// Recovers `dir`, creating it if missing. Fails only on I/O errors (e.g.
// permission denied), never because of damaged contents.
Result<RecoveredLog> RecoverLog(const std::string& dir);

}  // namespace apollo::wal
