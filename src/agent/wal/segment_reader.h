#pragma once

// Reads the records of one segment's bytes, telling apart a clean end, a
// damaged tail and damage in the middle. No I/O: the caller reads the file.
//
// Resync rule (docs/wal_format.md): at a position where no valid record
// starts, the reader looks for the next valid record. If the header verified
// but the payload did not, the record's own end is tried first; otherwise it
// scans forward byte by byte for the first offset where a header verifies,
// its payload fits in the data and its payload checksum verifies.
//
// Thread-safety: pure function.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/wal/wal_format.h"

namespace apollo::wal {

struct ScannedRecord {
  RecordType type;
  uint64_t seq;
  std::string_view payload;  // points into the scanned data
  uint64_t offset;           // of the record header within the segment
};

// Bytes [offset, offset + length) of a segment that hold no valid record.
struct DamagedRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string reason;
};

struct SegmentScan {
  std::vector<DamagedRange> damaged;  // in offset order
  // Offset just past the last valid record (0 if none).
  uint64_t valid_end = 0;
  // True if the data ends in a damaged range (bytes after valid_end that are
  // not a record): a torn tail if this is the newest segment.
  bool damaged_tail = false;
  // True if the data ends in zero bytes right where a record could start:
  // space the writer preallocated that the log has not reached (a clean
  // end, not damage; Wal keeps zeros written ahead of its appends).
  bool zero_tail = false;
};

// Calls on_record for every valid record in order.
SegmentScan ScanSegment(std::string_view data,
                        const std::function<void(const ScannedRecord&)>& on_record);

}  // namespace apollo::wal
