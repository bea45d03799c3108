#pragma once

// The agent WAL's on-disk format as constants. The prose specification is
// docs/wal_format.md; keep the two in step.
//
// A WAL directory holds segment files named SegmentFileName(index):
// "wal-<20-digit zero-padded index>.log", indexes increasing from 1. Each
// segment is a sequence of records; every segment begins with a
// kSegmentHeader record. A record is
//
//   offset size field
//   0      4    header_crc   masked CRC32C of bytes [4, 24) of the header
//   4      4    length       payload length in bytes (<= kMaxPayloadSize)
//   8      1    type         RecordType
//   9      3    reserved     zero
//   12     4    payload_crc  masked CRC32C of the type byte then the payload
//   16     8    seq          EVENT: the event's sequence number; other types:
//                            the highest seq assigned when it was written
//   24     length payload
//
// All integers little-endian. The header carries its own checksum so the
// length is trusted only after the header verifies.
//
// Thread-safety: constants and pure functions.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace apollo::wal {

inline constexpr size_t kHeaderSize = 24;
inline constexpr size_t kHeaderCrcOffset = 0;
inline constexpr size_t kLengthOffset = 4;
inline constexpr size_t kTypeOffset = 8;
inline constexpr size_t kPayloadCrcOffset = 12;
inline constexpr size_t kSeqOffset = 16;

// Larger payloads are rejected by Append (and a header claiming more is
// treated as corrupt, even if its checksum verifies).
inline constexpr uint32_t kMaxPayloadSize = 16u << 20;  // 16 MiB

inline constexpr uint64_t kDefaultSegmentSize = 64ull << 20;  // 64 MiB

// Payload of kSegmentHeader: magic, format version, the segment's own index,
// the highest seq assigned before the segment was opened, and the acked
// watermark at that time (so both survive deletion of older segments).
inline constexpr uint64_t kSegmentMagic = 0x31304C4157504100ull;  // "\0APWAL01"
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kSegmentHeaderPayloadSize = 8 + 4 + 8 + 8 + 8;

enum class RecordType : uint8_t {
  kSegmentHeader = 1,  // internal: first record of every segment
  kEvent = 2,          // apollo::EncodeEvent bytes; seq assigned by the WAL
  kClaim = 3,          // opaque: the agent claimed a task
  kState = 4,          // opaque: a local state-machine transition
  kCheckpoint = 5,     // opaque snapshot; replay starts from the last one
  kAck = 6,            // internal: 8-byte little-endian acked watermark
  // 16..255 are free for the agent's own opaque record types.
};
inline constexpr uint8_t kFirstUserRecordType = 16;

inline std::string SegmentFileName(uint64_t index) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "wal-%020llu.log", static_cast<unsigned long long>(index));
  return buf;
}

// The index of a segment file name, or nullopt if `name` is not one.
inline std::optional<uint64_t> ParseSegmentFileName(std::string_view name) {
  constexpr std::string_view kPrefix = "wal-", kSuffix = ".log";
  if (name.size() != kPrefix.size() + 20 + kSuffix.size()) {
    return std::nullopt;
  }
  if (name.substr(0, 4) != kPrefix || name.substr(24) != kSuffix) {
    return std::nullopt;
  }
  uint64_t v = 0;
  for (char c : name.substr(4, 20)) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

}  // namespace apollo::wal
