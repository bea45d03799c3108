#include "agent/wal/record.h"

#include "agent/wal/crc32c.h"

namespace apollo::wal {

void PutFixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    dst[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

void PutFixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    dst[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

uint32_t GetFixed32(const char* src) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    v = (v << 8) | static_cast<uint8_t>(src[i]);
  }
  return v;
}

uint64_t GetFixed64(const char* src) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | static_cast<uint8_t>(src[i]);
  }
  return v;
}

std::string EncodeFixed64(uint64_t v) {
  std::string s(8, '\0');
  PutFixed64(s.data(), v);
  return s;
}

std::optional<uint64_t> DecodeFixed64(std::string_view payload) {
  if (payload.size() != 8) {
    return std::nullopt;
  }
  return GetFixed64(payload.data());
}

namespace {

uint32_t PayloadCrc(RecordType type, std::string_view payload) {
  char t = static_cast<char>(type);
  uint32_t crc = crc32c::Extend(0, &t, 1);
  return crc32c::Mask(crc32c::Extend(crc, payload.data(), payload.size()));
}

}  // namespace

void AppendRecord(std::string* out, RecordType type, uint64_t seq, std::string_view payload) {
  char header[kHeaderSize] = {};
  PutFixed32(header + kLengthOffset, static_cast<uint32_t>(payload.size()));
  header[kTypeOffset] = static_cast<char>(type);
  PutFixed32(header + kPayloadCrcOffset, PayloadCrc(type, payload));
  PutFixed64(header + kSeqOffset, seq);
  uint32_t hcrc = crc32c::Value(header + kLengthOffset, kHeaderSize - kLengthOffset);
  PutFixed32(header + kHeaderCrcOffset, crc32c::Mask(hcrc));
  out->append(header, kHeaderSize);
  out->append(payload.data(), payload.size());
}

std::optional<RecordHeader> DecodeHeader(const char* data) {
  uint32_t stored = crc32c::Unmask(GetFixed32(data + kHeaderCrcOffset));
  if (stored != crc32c::Value(data + kLengthOffset, kHeaderSize - kLengthOffset)) {
    return std::nullopt;
  }
  RecordHeader h;
  h.length = GetFixed32(data + kLengthOffset);
  h.type = static_cast<RecordType>(static_cast<uint8_t>(data[kTypeOffset]));
  h.payload_crc = GetFixed32(data + kPayloadCrcOffset);
  h.seq = GetFixed64(data + kSeqOffset);
  bool reserved_zero = data[9] == 0 && data[10] == 0 && data[11] == 0;
  if (!reserved_zero || data[kTypeOffset] == 0 || h.length > kMaxPayloadSize) {
    return std::nullopt;
  }
  return h;
}

bool PayloadMatches(const RecordHeader& header, std::string_view payload) {
  return payload.size() == header.length && PayloadCrc(header.type, payload) == header.payload_crc;
}

std::string EncodeSegmentHeader(const SegmentHeader& h) {
  std::string s(kSegmentHeaderPayloadSize, '\0');
  PutFixed64(s.data(), kSegmentMagic);
  PutFixed32(s.data() + 8, kFormatVersion);
  PutFixed64(s.data() + 12, h.index);
  PutFixed64(s.data() + 20, h.last_seq_before);
  PutFixed64(s.data() + 28, h.acked_seq);
  return s;
}

std::optional<SegmentHeader> DecodeSegmentHeader(std::string_view payload) {
  if (payload.size() != kSegmentHeaderPayloadSize) {
    return std::nullopt;
  }
  if (GetFixed64(payload.data()) != kSegmentMagic) {
    return std::nullopt;
  }
  if (GetFixed32(payload.data() + 8) != kFormatVersion) {
    return std::nullopt;
  }
  SegmentHeader h;
  h.index = GetFixed64(payload.data() + 12);
  h.last_seq_before = GetFixed64(payload.data() + 20);
  h.acked_seq = GetFixed64(payload.data() + 28);
  return h;
}

}  // namespace apollo::wal
