// Wal recovery from damaged logs: one test per kind of damage, each checking
// that Open succeeds, what it reports, and that appends continue.

#include <gtest/gtest.h>

#include "agent/wal/wal.h"
#include "agent/wal/wal_test_util.h"

namespace apollo::wal {
namespace {

using testing::MakeEvent;
using testing::ReadAll;
using testing::RecordOffsets;
using testing::SegmentFiles;
using testing::TempDir;
using testing::WriteAllBytes;

class WalRecoveryTest : public ::testing::Test {
 protected:
  // Writes `n` events into one segment and closes the WAL.
  void WriteEvents(int n, const WalOptions& opts = {}) {
    Result<std::unique_ptr<Wal>> wal = Wal::Open(tmp_.path(), opts, clock_);
    ASSERT_TRUE(wal.ok()) << wal.status().ToString();
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE((*wal)->AppendEvent(MakeEvent(i)).ok());
    }
    ASSERT_TRUE((*wal)->Close().ok());
  }

  std::unique_ptr<Wal> Reopen(const WalOptions& opts = {}) {
    Result<std::unique_ptr<Wal>> wal = Wal::Open(tmp_.path(), opts, clock_);
    EXPECT_TRUE(wal.ok()) << wal.status().ToString();
    return wal.ok() ? std::move(*wal) : nullptr;
  }

  std::vector<uint64_t> UnackedSeqs(Wal& wal) {
    Result<std::vector<Event>> events = wal.ReadUnacked();
    EXPECT_TRUE(events.ok());
    std::vector<uint64_t> seqs;
    if (events.ok()) {
      for (const Event& e : *events) {
        seqs.push_back(e.sequence_number);
      }
    }
    return seqs;
  }

  std::string Seg(const std::string& name) { return tmp_.Sub(name); }

  TempDir tmp_;
  ManualClock clock_;
};

std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> v;
  for (uint64_t s = from; s <= to; ++s) {
    v.push_back(s);
  }
  return v;
}

TEST_F(WalRecoveryTest, TornTailIsTruncatedAndAppendsContinue) {
  WriteEvents(10);
  std::vector<std::string> files = SegmentFiles(tmp_.path());
  ASSERT_EQ(files.size(), 1u);
  std::string path = Seg(files[0]);
  std::string data = ReadAll(path);
  std::vector<uint64_t> offsets = RecordOffsets(path);
  ASSERT_EQ(offsets.size(), 11u);      // segment header + 10 events
  uint64_t cut = offsets.back() + 30;  // the last event only partly written
  WriteAllBytes(path, data.substr(0, cut));

  auto wal = Reopen();
  ASSERT_TRUE(wal);
  EXPECT_EQ(wal->recovery_report().bytes_truncated, cut - offsets.back());
  EXPECT_TRUE(wal->recovery_report().corrupt_regions.empty());
  EXPECT_EQ(ReadAll(path).size(), offsets.back());  // truncated on disk
  EXPECT_EQ(UnackedSeqs(*wal), Range(1, 9));
  Result<uint64_t> seq = wal->AppendEvent(MakeEvent(99));
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 10u);  // seq 10 was never durable, so it may be reused
  ASSERT_TRUE(wal->Close().ok());

  wal = Reopen();
  ASSERT_TRUE(wal);
  EXPECT_EQ(wal->recovery_report().bytes_truncated, 0u);
  EXPECT_FALSE(wal->recovery_report().data_loss());
  EXPECT_EQ(UnackedSeqs(*wal), Range(1, 10));
}

TEST_F(WalRecoveryTest, ATornWriteInPreallocatedZerosCountsOnlyItsOwnBytes) {
  WriteEvents(10);
  std::string path = Seg(SegmentFiles(tmp_.path())[0]);
  std::vector<uint64_t> offsets = RecordOffsets(path);
  std::string data = ReadAll(path);
  // The last event only partly written, then the zeros a crash leaves.
  uint64_t cut = offsets.back() + 30;
  WriteAllBytes(path, data.substr(0, cut) + std::string(1 << 20, '\0'));

  auto wal = Reopen();
  ASSERT_TRUE(wal);
  EXPECT_EQ(wal->recovery_report().bytes_truncated, 30u);
  EXPECT_TRUE(wal->recovery_report().corrupt_regions.empty());
  EXPECT_EQ(ReadAll(path).size(), offsets.back());  // zeros and the torn record cut
  EXPECT_EQ(UnackedSeqs(*wal), Range(1, 9));
}

TEST_F(WalRecoveryTest, GarbageTailIsTruncated) {
  WriteEvents(3);
  std::string path = Seg(SegmentFiles(tmp_.path())[0]);
  WriteAllBytes(path, ReadAll(path) + std::string(1000, '\0') + "junk");
  auto wal = Reopen();
  ASSERT_TRUE(wal);
  EXPECT_EQ(wal->recovery_report().bytes_truncated, 1004u);
  EXPECT_FALSE(wal->recovery_report().data_loss());
  EXPECT_EQ(UnackedSeqs(*wal), Range(1, 3));
}

TEST_F(WalRecoveryTest, FlippedByteLosesExactlyThatRecord) {
  WriteEvents(10);
  std::string name = SegmentFiles(tmp_.path())[0];
  std::string path = Seg(name);
  std::vector<uint64_t> offsets = RecordOffsets(path);
  std::string data = ReadAll(path);
  uint64_t victim = offsets[5];  // the 5th event (offsets[0] is the segment header)
  data[victim + kHeaderSize + 10] ^= 0x20;
  WriteAllBytes(path, data);

  auto wal = Reopen();
  ASSERT_TRUE(wal);
  const RecoveryReport& rep = wal->recovery_report();
  ASSERT_EQ(rep.corrupt_regions.size(), 1u) << rep.ToString();
  EXPECT_EQ(rep.corrupt_regions[0].segment, name);
  EXPECT_EQ(rep.corrupt_regions[0].offset, victim);
  EXPECT_EQ(rep.corrupt_regions[0].length, offsets[6] - victim);
  EXPECT_EQ(rep.bytes_truncated, 0u);
  EXPECT_EQ(rep.last_seq, 10u);
  EXPECT_EQ(UnackedSeqs(*wal), (std::vector<uint64_t>{1, 2, 3, 4, 6, 7, 8, 9, 10}));
  EXPECT_EQ(*wal->AppendEvent(MakeEvent(11)), 11u);
  EXPECT_EQ(ReadAll(path), data);  // damage in the middle is reported, not "repaired"
}

TEST_F(WalRecoveryTest, DamagedLengthFieldLosesExactlyThatRecord) {
  WriteEvents(10);
  std::string name = SegmentFiles(tmp_.path())[0];
  std::string path = Seg(name);
  std::vector<uint64_t> offsets = RecordOffsets(path);
  std::string data = ReadAll(path);
  data[offsets[3] + kLengthOffset + 2] = '\x7f';  // length now ~8 MB
  WriteAllBytes(path, data);

  auto wal = Reopen();
  ASSERT_TRUE(wal);
  const RecoveryReport& rep = wal->recovery_report();
  ASSERT_EQ(rep.corrupt_regions.size(), 1u) << rep.ToString();
  EXPECT_EQ(rep.corrupt_regions[0].offset, offsets[3]);
  EXPECT_EQ(rep.corrupt_regions[0].reason, "header checksum mismatch");
  EXPECT_EQ(UnackedSeqs(*wal), (std::vector<uint64_t>{1, 2, 4, 5, 6, 7, 8, 9, 10}));
}

TEST_F(WalRecoveryTest, DamageInAnOlderSegmentTailIsCorruptionNotTruncation) {
  WalOptions opts;
  opts.segment_size = 1024;
  WriteEvents(40, opts);
  std::vector<std::string> files = SegmentFiles(tmp_.path());
  ASSERT_GT(files.size(), 2u);
  std::string path = Seg(files[0]);
  std::vector<uint64_t> offsets = RecordOffsets(path);
  std::string data = ReadAll(path);
  data[offsets.back() + kHeaderSize] ^= 0x01;  // last record of the oldest segment
  WriteAllBytes(path, data);

  auto wal = Reopen(opts);
  ASSERT_TRUE(wal);
  const RecoveryReport& rep = wal->recovery_report();
  ASSERT_EQ(rep.corrupt_regions.size(), 1u) << rep.ToString();
  EXPECT_EQ(rep.corrupt_regions[0].segment, files[0]);
  EXPECT_EQ(rep.corrupt_regions[0].offset, offsets.back());
  EXPECT_EQ(rep.bytes_truncated, 0u);
  EXPECT_EQ(ReadAll(path).size(), data.size());
  EXPECT_EQ(UnackedSeqs(*wal).size(), 39u);
  EXPECT_EQ(rep.last_seq, 40u);
}

TEST_F(WalRecoveryTest, EmptyAndHeaderlessNewestSegmentIsHandled) {
  WriteEvents(5);
  // A crash right after a new segment was created: an empty file.
  WriteAllBytes(Seg(SegmentFileName(9)), "");
  auto wal = Reopen();
  ASSERT_TRUE(wal);
  EXPECT_FALSE(wal->recovery_report().data_loss());
  EXPECT_EQ(*wal->AppendEvent(MakeEvent(6)), 6u);
}

TEST_F(WalRecoveryTest, WhollyGarbageSegmentStillOpens) {
  WriteEvents(5);
  std::string garbage(5000, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) {
    garbage[i] = static_cast<char>(i * 131 + 7);
  }
  WriteAllBytes(Seg(SegmentFileName(1)), garbage);  // overwrite the only segment
  auto wal = Reopen();
  ASSERT_TRUE(wal);
  EXPECT_EQ(wal->recovery_report().bytes_truncated, 5000u);
  EXPECT_TRUE(wal->AppendEvent(MakeEvent(1)).ok());
}

}  // namespace
}  // namespace apollo::wal
