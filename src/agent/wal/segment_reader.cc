#include "agent/wal/segment_reader.h"

#include <optional>

#include "agent/wal/record.h"

namespace apollo::wal {
namespace {

enum class Check { kValid, kBadHeader, kTruncated, kBadPayload };

struct Probe {
  Check check = Check::kBadHeader;
  RecordHeader header;
};

// Checks whether a whole valid record starts at `pos`. The header is verified
// before its length is used.
Probe ProbeAt(std::string_view data, uint64_t pos) {
  Probe p;
  if (data.size() - pos < kHeaderSize) {
    p.check = Check::kTruncated;
    return p;
  }
  std::optional<RecordHeader> h = DecodeHeader(data.data() + pos);
  if (!h) {
    return p;
  }
  p.header = *h;
  if (data.size() - pos - kHeaderSize < h->length) {
    p.check = Check::kTruncated;
    return p;
  }
  std::string_view payload = data.substr(pos + kHeaderSize, h->length);
  p.check = PayloadMatches(*h, payload) ? Check::kValid : Check::kBadPayload;
  return p;
}

std::string Reason(const Probe& p) {
  switch (p.check) {
    case Check::kBadHeader:
      return "header checksum mismatch";
    case Check::kTruncated:
      return "record extends past end of segment";
    case Check::kBadPayload:
      return "payload checksum mismatch";
    case Check::kValid:
      break;
  }
  return "valid";
}

// The offset of the next valid record after the invalid one at `pos`, or
// data.size() if there is none.
uint64_t Resync(std::string_view data, uint64_t pos, const Probe& bad) {
  if (bad.check == Check::kBadPayload) {
    // The header verified, so its length is trustworthy: try its end first.
    uint64_t next = pos + kHeaderSize + bad.header.length;
    if (next <= data.size() &&
        (next == data.size() || ProbeAt(data, next).check == Check::kValid)) {
      return next;
    }
  }
  for (uint64_t q = pos + 1; q + kHeaderSize <= data.size(); ++q) {
    if (data[q] == '\0') {
      // A valid header has a non-zero byte (its type) within its first
      // kHeaderSize bytes, so skip zero runs (unwritten space after a crash)
      // instead of probing every offset in them.
      size_t nz = data.find_first_not_of('\0', q);
      if (nz == std::string_view::npos) {
        break;
      }
      if (nz >= q + kHeaderSize) {
        q = nz - kHeaderSize + 1;
      }
    }
    if (ProbeAt(data, q).check == Check::kValid) {
      return q;
    }
  }
  return data.size();
}

}  // namespace

SegmentScan ScanSegment(std::string_view data,
                        const std::function<void(const ScannedRecord&)>& on_record) {
  SegmentScan scan;
  uint64_t pos = 0;
  while (pos < data.size()) {
    Probe p = ProbeAt(data, pos);
    if (p.check == Check::kValid) {
      on_record(
          {p.header.type, p.header.seq, data.substr(pos + kHeaderSize, p.header.length), pos});
      pos += kHeaderSize + p.header.length;
      scan.valid_end = pos;
      continue;
    }
    if (data.find_first_not_of('\0', pos) == std::string_view::npos) {
      scan.zero_tail = true;  // preallocated space: the log ends here
      break;
    }
    uint64_t next = Resync(data, pos, p);
    scan.damaged.push_back({pos, next - pos, Reason(p)});
    if (next == data.size()) {
      scan.damaged_tail = true;
    }
    pos = next;
  }
  return scan;
}

}  // namespace apollo::wal
