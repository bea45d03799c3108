#pragma once

// Encoding and decoding of single WAL records (layout in wal_format.h and
// docs/wal_format.md). No I/O.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agent/wal/wal_format.h"

namespace apollo::wal {

struct RecordHeader {
  uint32_t length = 0;
  RecordType type = RecordType::kSegmentHeader;
  uint32_t payload_crc = 0;  // masked
  uint64_t seq = 0;
};

// Appends one framed record (header + payload) to *out.
// Precondition: payload.size() <= kMaxPayloadSize.
void AppendRecord(std::string* out, RecordType type, uint64_t seq, std::string_view payload);

// Decodes the kHeaderSize bytes at `data`. Returns nullopt unless the header
// checksum verifies, the reserved bytes are zero, the type is non-zero and
// length <= kMaxPayloadSize: only then may the caller trust `length`.
std::optional<RecordHeader> DecodeHeader(const char* data);

// True if `payload` (exactly header.length bytes) matches header.payload_crc.
bool PayloadMatches(const RecordHeader& header, std::string_view payload);

// The kSegmentHeader payload.
struct SegmentHeader {
  uint64_t index = 0;
  uint64_t last_seq_before = 0;  // highest seq assigned before this segment
  uint64_t acked_seq = 0;        // acked watermark when the segment opened
};
std::string EncodeSegmentHeader(const SegmentHeader& h);
// nullopt if the payload has the wrong size, magic or version.
std::optional<SegmentHeader> DecodeSegmentHeader(std::string_view payload);

// Little-endian fixed-width helpers (also the kAck payload).
void PutFixed32(char* dst, uint32_t v);
void PutFixed64(char* dst, uint64_t v);
uint32_t GetFixed32(const char* src);
uint64_t GetFixed64(const char* src);
std::string EncodeFixed64(uint64_t v);
std::optional<uint64_t> DecodeFixed64(std::string_view payload);

}  // namespace apollo::wal
