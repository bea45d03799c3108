// Acks, checkpoints and segment retention.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "agent/wal/wal.h"
#include "agent/wal/wal_test_util.h"

namespace apollo::wal {
namespace {

using testing::MakeEvent;
using testing::OpenOrDie;
using testing::SegmentFiles;
using testing::TempDir;

WalOptions SmallSegments(Duration retention = Duration(0)) {
  WalOptions o;
  o.segment_size = 1024;
  o.retention = retention;
  return o;
}

void AppendEvents(Wal& wal, int n) {
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(wal.AppendEvent(MakeEvent(i)).ok());
  }
}

// A wiped log learns from the center that it already stored seqs up to 500:
// numbering continues above it, durably, and nothing is left unacked.
TEST(WalRetention, AdvanceToContinuesAboveTheCentersWatermark) {
  TempDir tmp;
  ManualClock clock;
  {
    auto wal = OpenOrDie(tmp.path(), SmallSegments(), clock);
    ASSERT_TRUE(wal);
    AppendEvents(*wal, 3);
    ASSERT_TRUE(wal->AdvanceTo(500).ok());
    EXPECT_EQ(wal->last_seq(), 500u);
    EXPECT_EQ(wal->acked_seq(), 500u);
    ASSERT_TRUE(wal->AdvanceTo(10).ok());  // lower: no-op
    EXPECT_EQ(wal->last_seq(), 500u);
    Result<uint64_t> next = wal->AppendEvent(MakeEvent(0));
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(*next, 501u);
    ASSERT_TRUE(wal->Close().ok());
  }
  auto again = OpenOrDie(tmp.path(), SmallSegments(), clock);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->last_seq(), 501u);
  EXPECT_EQ(again->acked_seq(), 500u);
  Result<std::vector<Event>> unacked = again->ReadUnacked();
  ASSERT_TRUE(unacked.ok());
  ASSERT_EQ(unacked->size(), 1u);
  EXPECT_EQ(unacked->front().sequence_number, 501u);
}

TEST(WalRetention, AckDeletesWhollyAckedSegments) {
  TempDir tmp;
  ManualClock clock;
  WalOptions opts = SmallSegments();
  opts.require_checkpoint = false;
  auto wal = OpenOrDie(tmp.path(), opts, clock);
  ASSERT_TRUE(wal);
  AppendEvents(*wal, 100);
  size_t before = SegmentFiles(tmp.path()).size();
  ASSERT_GT(before, 5u);
  ASSERT_TRUE(wal->MarkAcked(50).ok());
  size_t after = SegmentFiles(tmp.path()).size();
  EXPECT_LT(after, before);
  EXPECT_EQ(wal->stats().segments, after);
  Result<std::vector<Event>> unacked = wal->ReadUnacked();
  ASSERT_TRUE(unacked.ok());
  ASSERT_EQ(unacked->size(), 50u);
  EXPECT_EQ(unacked->front().sequence_number, 51u);
  ASSERT_TRUE(wal->MarkAcked(40).ok());  // an older ack is a no-op
  EXPECT_EQ(wal->acked_seq(), 50u);

  ASSERT_TRUE(wal->MarkAcked(100).ok());
  EXPECT_EQ(SegmentFiles(tmp.path()).size(), 1u);  // only the active segment
  ASSERT_TRUE(wal->Close().ok());

  wal = OpenOrDie(tmp.path(), opts, clock);
  ASSERT_TRUE(wal);
  // Watermark and seq survive although every event record is gone.
  EXPECT_EQ(wal->acked_seq(), 100u);
  EXPECT_EQ(wal->last_seq(), 100u);
  EXPECT_TRUE(wal->ReadUnacked()->empty());
  EXPECT_EQ(*wal->AppendEvent(MakeEvent(1)), 101u);
}

TEST(WalRetention, ReadEventsAfterPagesThroughUnacked) {
  TempDir tmp;
  ManualClock clock;
  auto wal = OpenOrDie(tmp.path(), SmallSegments(), clock);
  ASSERT_TRUE(wal);
  AppendEvents(*wal, 50);
  ASSERT_TRUE(wal->MarkAcked(10).ok());
  uint64_t cursor = 0;
  std::vector<uint64_t> seen;
  for (int page = 0; page < 10; ++page) {
    Result<std::vector<Event>> chunk = wal->ReadEventsAfter(cursor, 15);
    ASSERT_TRUE(chunk.ok());
    if (chunk->empty()) {
      break;
    }
    EXPECT_LE(chunk->size(), 15u);
    for (const Event& e : *chunk) {
      seen.push_back(e.sequence_number);
    }
    cursor = chunk->back().sequence_number;
  }
  ASSERT_EQ(seen.size(), 40u);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i], 11 + i);
  }
}

TEST(WalRetention, RetentionDelaysDeletion) {
  TempDir tmp;
  ManualClock clock;
  WalOptions opts = SmallSegments(std::chrono::hours(24 * 7));
  opts.require_checkpoint = false;
  auto wal = OpenOrDie(tmp.path(), opts, clock);
  ASSERT_TRUE(wal);
  AppendEvents(*wal, 60);
  ASSERT_TRUE(wal->MarkAcked(60).ok());
  size_t before = SegmentFiles(tmp.path()).size();  // kept: retention not over
  ASSERT_GT(before, 5u);
  clock.Advance(std::chrono::hours(24 * 7) - Duration(1));
  ASSERT_TRUE(wal->RemoveObsoleteSegments().ok());
  EXPECT_EQ(SegmentFiles(tmp.path()).size(), before);
  clock.Advance(Duration(1));
  ASSERT_TRUE(wal->RemoveObsoleteSegments().ok());
  EXPECT_EQ(SegmentFiles(tmp.path()).size(), 1u);
}

TEST(WalRetention, ArchiveDirReceivesRemovedSegments) {
  TempDir tmp;
  ManualClock clock;
  WalOptions opts = SmallSegments();
  opts.require_checkpoint = false;
  opts.archive_dir = tmp.Sub("archive");
  auto wal = OpenOrDie(tmp.Sub("wal"), opts, clock);
  ASSERT_TRUE(wal);
  AppendEvents(*wal, 60);
  ASSERT_TRUE(wal->MarkAcked(60).ok());
  std::vector<std::string> live = SegmentFiles(tmp.Sub("wal"));
  std::vector<std::string> archived = SegmentFiles(tmp.Sub("archive"));
  ASSERT_EQ(live.size(), 1u);
  ASSERT_GT(archived.size(), 5u);
  // Every segment before the active one moved, oldest first, none lost.
  EXPECT_EQ(archived.front(), SegmentFileName(1));
  EXPECT_EQ(archived.back(), SegmentFileName(*ParseSegmentFileName(live[0]) - 1));
  EXPECT_EQ(archived.size(), *ParseSegmentFileName(live[0]) - 1);
}

TEST(WalRetention, AckedSegmentsWaitForACheckpoint) {
  TempDir tmp;
  ManualClock clock;
  auto wal = OpenOrDie(tmp.path(), SmallSegments(), clock);  // require_checkpoint
  ASSERT_TRUE(wal);
  AppendEvents(*wal, 60);
  ASSERT_TRUE(wal->MarkAcked(60).ok());
  size_t before = SegmentFiles(tmp.path()).size();  // all kept: state may be needed
  ASSERT_GT(before, 5u);
  ASSERT_TRUE(wal->Checkpoint("snapshot").ok());
  EXPECT_LT(SegmentFiles(tmp.path()).size(), before);
}

TEST(WalRetention, CheckpointShortensReplay) {
  TempDir tmp;
  ManualClock clock;
  {
    auto wal = OpenOrDie(tmp.path(), SmallSegments(), clock);
    ASSERT_TRUE(wal);
    AppendEvents(*wal, 30);
    ASSERT_TRUE(wal->Append(RecordType::kClaim, "claim task-1").ok());
    ASSERT_TRUE(wal->Checkpoint("first").ok());
    ASSERT_TRUE(wal->Append(RecordType::kState, "between").ok());
    ASSERT_TRUE(wal->Checkpoint("tasks={task-1:RUNNING}").ok());
    ASSERT_TRUE(wal->Append(RecordType::kState, "task-1 SUCCEEDED").ok());
    ASSERT_TRUE(wal->AppendEvent(MakeEvent(31)).ok());
  }
  auto wal = OpenOrDie(tmp.path(), SmallSegments(), clock);
  ASSERT_TRUE(wal);
  RecoveredState st = wal->TakeRecoveredState();
  ASSERT_TRUE(st.checkpoint.has_value());
  EXPECT_EQ(*st.checkpoint, "tasks={task-1:RUNNING}");
  ASSERT_EQ(st.since_checkpoint.size(), 2u);
  EXPECT_EQ(st.since_checkpoint[0].type, RecordType::kState);
  EXPECT_EQ(st.since_checkpoint[0].payload, "task-1 SUCCEEDED");
  EXPECT_EQ(st.since_checkpoint[1].type, RecordType::kEvent);
  EXPECT_EQ(st.since_checkpoint[1].seq, 31u);
  EXPECT_EQ(st.last_seq, 31u);
  // Unacked events before the checkpoint are still there to resend.
  EXPECT_EQ(wal->ReadUnacked()->size(), 31u);
  EXPECT_FALSE(wal->TakeRecoveredState().checkpoint.has_value());  // moved out
}

TEST(WalRetention, CheckpointSegmentIsNeverDropped) {
  TempDir tmp;
  ManualClock clock;
  {
    auto wal = OpenOrDie(tmp.path(), SmallSegments(), clock);
    ASSERT_TRUE(wal);
    AppendEvents(*wal, 30);
    ASSERT_TRUE(wal->Checkpoint("cp").ok());
    AppendEvents(*wal, 30);
    ASSERT_TRUE(wal->MarkAcked(60).ok());
  }
  auto wal = OpenOrDie(tmp.path(), SmallSegments(), clock);
  ASSERT_TRUE(wal);
  RecoveredState st = wal->TakeRecoveredState();
  ASSERT_TRUE(st.checkpoint.has_value());
  EXPECT_EQ(*st.checkpoint, "cp");
  EXPECT_EQ(st.since_checkpoint.size(), 30u);
  EXPECT_EQ(st.acked_seq, 60u);
  EXPECT_TRUE(wal->ReadUnacked()->empty());
}

// Appends, acks, checkpoints, reads and rotation all at once (run it under
// TSan too): readers never see an acked or out-of-order event, and the final
// state after reopen is exact.
TEST(WalRetention, ConcurrentAppendAckCheckpointRead) {
  TempDir tmp;
  ManualClock clock;
  constexpr int kWriters = 8, kPerWriter = 150;
  {
    auto wal = OpenOrDie(tmp.path(), SmallSegments(), clock);
    ASSERT_TRUE(wal);
    std::atomic<int> writers_left{kWriters};
    std::atomic<int> bad_reads{0};
    std::vector<std::thread> threads;
    threads.reserve(kWriters + 2);
    for (int t = 0; t < kWriters; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerWriter; ++i) {
          if (!wal->AppendEvent(MakeEvent(t * kPerWriter + i)).ok()) {
            ++bad_reads;
          }
          if (i % 10 == 0 && !wal->Append(RecordType::kState, "s").ok()) {
            ++bad_reads;
          }
        }
        --writers_left;
      });
    }
    threads.emplace_back([&] {  // acker + checkpointer
      for (int round = 0; round < 100000 && writers_left > 0; ++round) {
        uint64_t target = wal->last_seq() / 2;
        if (!wal->MarkAcked(target).ok()) {
          ++bad_reads;
        }
        if (round % 5 == 0 && !wal->Checkpoint("cp").ok()) {
          ++bad_reads;
        }
      }
    });
    threads.emplace_back([&] {  // reader
      for (int round = 0; round < 100000 && writers_left > 0; ++round) {
        uint64_t acked_before = wal->acked_seq();
        Result<std::vector<Event>> events = wal->ReadEventsAfter(0, 50);
        if (!events.ok()) {
          ++bad_reads;
          continue;
        }
        for (size_t i = 0; i < events->size(); ++i) {
          uint64_t seq = (*events)[i].sequence_number;
          if (seq <= acked_before || (i > 0 && seq <= (*events)[i - 1].sequence_number)) {
            ++bad_reads;
          }
        }
      }
    });
    for (std::thread& th : threads) {
      th.join();
    }
    EXPECT_EQ(bad_reads.load(), 0);
    EXPECT_EQ(wal->last_seq(), static_cast<uint64_t>(kWriters * kPerWriter));
    ASSERT_TRUE(wal->MarkAcked(1000).ok());
  }
  auto wal = OpenOrDie(tmp.path(), SmallSegments(), clock);
  ASSERT_TRUE(wal);
  EXPECT_FALSE(wal->recovery_report().data_loss());
  EXPECT_EQ(wal->acked_seq(), 1000u);
  Result<std::vector<Event>> rest = wal->ReadUnacked();
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), static_cast<size_t>(kWriters * kPerWriter) - 1000u);
  EXPECT_EQ(rest->front().sequence_number, 1001u);
  EXPECT_EQ(rest->back().sequence_number, static_cast<uint64_t>(kWriters * kPerWriter));
}

}  // namespace
}  // namespace apollo::wal
