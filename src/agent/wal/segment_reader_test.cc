// One test per kind of damage, on in-memory segment bytes.

#include "agent/wal/segment_reader.h"

#include <gtest/gtest.h>

#include "agent/wal/crc32c.h"
#include "agent/wal/record.h"

namespace apollo::wal {
namespace {

struct Built {
  std::string data;
  std::vector<uint64_t> offsets;
};

Built BuildSegment(int n) {
  Built b;
  for (int i = 0; i < n; ++i) {
    b.offsets.push_back(b.data.size());
    AppendRecord(
        &b.data, RecordType::kState, static_cast<uint64_t>(i) + 1,
        "payload number " + std::to_string(i) + std::string(static_cast<size_t>(i % 5 * 10), 'x'));
  }
  return b;
}

std::vector<uint64_t> ScanSeqs(const std::string& data, SegmentScan* out) {
  std::vector<uint64_t> seqs;
  *out = ScanSegment(data, [&](const ScannedRecord& r) { seqs.push_back(r.seq); });
  return seqs;
}

TEST(SegmentReader, CleanEnd) {
  Built b = BuildSegment(10);
  SegmentScan scan;
  std::vector<uint64_t> seqs = ScanSeqs(b.data, &scan);
  ASSERT_EQ(seqs.size(), 10u);
  EXPECT_EQ(seqs.front(), 1u);
  EXPECT_EQ(seqs.back(), 10u);
  EXPECT_TRUE(scan.damaged.empty());
  EXPECT_FALSE(scan.damaged_tail);
  EXPECT_EQ(scan.valid_end, b.data.size());
}

TEST(SegmentReader, TruncatedTrailingRecordIsATornTail) {
  Built b = BuildSegment(5);
  for (uint64_t cut = b.offsets[4] + 1; cut < b.data.size(); cut += 7) {
    SegmentScan scan;
    std::vector<uint64_t> seqs = ScanSeqs(b.data.substr(0, cut), &scan);
    EXPECT_EQ(seqs.size(), 4u) << cut;
    EXPECT_TRUE(scan.damaged_tail);
    EXPECT_EQ(scan.valid_end, b.offsets[4]);
  }
}

TEST(SegmentReader, ChecksumMismatchSkipsExactlyOneRecord) {
  Built b = BuildSegment(10);
  std::string data = b.data;
  data[b.offsets[4] + kHeaderSize + 3] ^= 0x01;  // one bit of record 5's payload
  SegmentScan scan;
  std::vector<uint64_t> seqs = ScanSeqs(data, &scan);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2, 3, 4, 6, 7, 8, 9, 10}));
  ASSERT_EQ(scan.damaged.size(), 1u);
  EXPECT_EQ(scan.damaged[0].offset, b.offsets[4]);
  EXPECT_EQ(scan.damaged[0].length, b.offsets[5] - b.offsets[4]);
  EXPECT_EQ(scan.damaged[0].reason, "payload checksum mismatch");
  EXPECT_FALSE(scan.damaged_tail);
}

TEST(SegmentReader, BadHeaderByteResyncsAtNextRecord) {
  Built b = BuildSegment(10);
  std::string data = b.data;
  data[b.offsets[2] + kSeqOffset] ^= 0x40;
  SegmentScan scan;
  std::vector<uint64_t> seqs = ScanSeqs(data, &scan);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2, 4, 5, 6, 7, 8, 9, 10}));
  ASSERT_EQ(scan.damaged.size(), 1u);
  EXPECT_EQ(scan.damaged[0].offset, b.offsets[2]);
  EXPECT_EQ(scan.damaged[0].length, b.offsets[3] - b.offsets[2]);
  EXPECT_EQ(scan.damaged[0].reason, "header checksum mismatch");
}

TEST(SegmentReader, BadLengthIsCaughtBeforeItIsTrusted) {
  Built b = BuildSegment(10);
  std::string data = b.data;
  // A huge length: without the header checksum the reader would skip (or
  // read) far past the record.
  PutFixed32(data.data() + b.offsets[6] + kLengthOffset, 0x7fffffffu);
  SegmentScan scan;
  std::vector<uint64_t> seqs = ScanSeqs(data, &scan);
  EXPECT_EQ(seqs.size(), 9u);
  ASSERT_EQ(scan.damaged.size(), 1u);
  EXPECT_EQ(scan.damaged[0].offset, b.offsets[6]);
  EXPECT_EQ(scan.damaged[0].length, b.offsets[7] - b.offsets[6]);
}

TEST(SegmentReader, LengthWithForgedHeaderChecksumStillResyncs) {
  Built b = BuildSegment(10);
  std::string data = b.data;
  char* h = data.data() + b.offsets[3];
  PutFixed32(h + kLengthOffset, 5);  // shorter than the real payload
  PutFixed32(h, crc32c::Mask(crc32c::Value(h + 4, kHeaderSize - 4)));
  SegmentScan scan;
  std::vector<uint64_t> seqs = ScanSeqs(data, &scan);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2, 3, 5, 6, 7, 8, 9, 10}));
  ASSERT_EQ(scan.damaged.size(), 1u);
  EXPECT_EQ(scan.damaged[0].offset, b.offsets[3]);
  EXPECT_EQ(scan.damaged[0].length, b.offsets[4] - b.offsets[3]);
}

TEST(SegmentReader, ZeroFilledTailIsACleanEnd) {
  // What the writer's preallocation leaves after a crash: records, then zeros.
  Built b = BuildSegment(3);
  SegmentScan scan;
  std::vector<uint64_t> seqs = ScanSeqs(b.data + std::string(4096, '\0'), &scan);
  EXPECT_EQ(seqs.size(), 3u);
  EXPECT_TRUE(scan.zero_tail);
  EXPECT_FALSE(scan.damaged_tail);
  EXPECT_TRUE(scan.damaged.empty());
  EXPECT_EQ(scan.valid_end, b.data.size());
}

TEST(SegmentReader, PartRecordThenZerosIsATornTail) {
  // A batch torn in preallocated space: part of a record, then the zeros.
  Built b = BuildSegment(4);
  std::string data = b.data.substr(0, b.offsets[3] + 10) + std::string(4096, '\0');
  SegmentScan scan;
  std::vector<uint64_t> seqs = ScanSeqs(data, &scan);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(scan.damaged_tail);
  EXPECT_FALSE(scan.zero_tail);
  EXPECT_EQ(scan.valid_end, b.offsets[3]);
}

TEST(SegmentReader, ZeroRunInTheMiddleIsOneDamagedRegion) {
  Built b = BuildSegment(6);
  std::string data =
      b.data.substr(0, b.offsets[3]) + std::string(1 << 20, '\0') + b.data.substr(b.offsets[3]);
  SegmentScan scan;
  std::vector<uint64_t> seqs = ScanSeqs(data, &scan);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(scan.damaged.size(), 1u);
  EXPECT_EQ(scan.damaged[0].offset, b.offsets[3]);
  EXPECT_EQ(scan.damaged[0].length, 1u << 20);
  EXPECT_FALSE(scan.damaged_tail);
}

TEST(SegmentReader, TwoCorruptRegionsBothReported) {
  Built b = BuildSegment(10);
  std::string data = b.data;
  data[b.offsets[1] + kHeaderSize] ^= 0x10;
  data[b.offsets[8] + 1] ^= 0x10;
  SegmentScan scan;
  std::vector<uint64_t> seqs = ScanSeqs(data, &scan);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 3, 4, 5, 6, 7, 8, 10}));
  ASSERT_EQ(scan.damaged.size(), 2u);
  EXPECT_EQ(scan.damaged[0].offset, b.offsets[1]);
  EXPECT_EQ(scan.damaged[1].offset, b.offsets[8]);
}

TEST(Record, SegmentHeaderRoundTrip) {
  SegmentHeader h{7, 1234, 1000};
  std::optional<SegmentHeader> d = DecodeSegmentHeader(EncodeSegmentHeader(h));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->index, 7u);
  EXPECT_EQ(d->last_seq_before, 1234u);
  EXPECT_EQ(d->acked_seq, 1000u);
  EXPECT_FALSE(DecodeSegmentHeader("short").has_value());
}

TEST(Record, SegmentFileNames) {
  EXPECT_EQ(SegmentFileName(42), "wal-00000000000000000042.log");
  EXPECT_EQ(ParseSegmentFileName("wal-00000000000000000042.log"), 42u);
  EXPECT_FALSE(ParseSegmentFileName("wal-0000000000000000004x.log").has_value());
  EXPECT_FALSE(ParseSegmentFileName("wal-42.log").has_value());
}

}  // namespace
}  // namespace apollo::wal
