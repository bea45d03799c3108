// Wal group commit (leader/follower): many concurrent appenders share
// fdatasyncs and get distinct, ordered, durable seqs; a failed fdatasync
// fails every caller waiting on it and every later call.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "agent/wal/wal.h"
#include "agent/wal/wal_test_util.h"

namespace apollo::wal {

// The Wal's test seam (a friend): replaces the batch fdatasync and reads the
// number of threads inside an append call. Exists only in this test binary.
class WalTestPeer {
 public:
  static void SetSync(Wal& wal, std::function<Status(int fd, const std::string& path)> fn) {
    wal.sync_for_test_ = std::move(fn);
  }
  static uint64_t Appenders(const Wal& wal) { return wal.appenders_.load(); }
};

namespace {

using testing::MakeEvent;
using testing::OpenOrDie;
using testing::TempDir;

TEST(WalGroupCommit, LoneAppenderSyncsEachRecordItself) {
  TempDir tmp;
  ManualClock clock;
  auto wal = OpenOrDie(tmp.path(), {}, clock);
  ASSERT_TRUE(wal);
  for (int i = 0; i < 20; ++i) {
    Result<uint64_t> seq = wal->AppendEvent(MakeEvent(i));
    ASSERT_TRUE(seq.ok()) << seq.status().ToString();
    EXPECT_EQ(*seq, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(wal->stats().syncs, static_cast<uint64_t>(i + 1));  // durable on return
  }
  EXPECT_EQ(wal->stats().records, 20u);
  // Every sync is in exactly one duration bucket, and their time adds up.
  WalStats s = wal->stats();
  uint64_t bucketed = 0;
  for (uint64_t n : s.sync_buckets) bucketed += n;
  EXPECT_EQ(bucketed, s.syncs);
  EXPECT_GT(s.sync_seconds, 0.0);
}

TEST(WalGroupCommit, ManyAppendersGetDistinctOrderedDurableSeqs) {
  TempDir tmp;
  ManualClock clock;
  constexpr int kThreads = 16, kPerThread = 500;
  constexpr uint64_t kTotal = kThreads * kPerThread;
  std::vector<std::vector<uint64_t>> seqs(kThreads);
  {
    auto wal = OpenOrDie(tmp.path(), {}, clock);
    ASSERT_TRUE(wal);
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          Result<uint64_t> s = wal->AppendEvent(MakeEvent(t * kPerThread + i));
          if (!s.ok()) {
            ADD_FAILURE() << s.status().ToString();
            return;
          }
          seqs[t].push_back(*s);
        }
      });
    }
    for (std::thread& th : threads) {
      th.join();
    }
    WalStats stats = wal->stats();
    EXPECT_EQ(stats.records, kTotal);
    EXPECT_LT(stats.syncs, kTotal) << "no batching: every record had an fdatasync of its own";
    EXPECT_GT(stats.syncs, 0u);
    ASSERT_TRUE(wal->Close().ok());
  }
  std::set<uint64_t> all;
  for (const auto& v : seqs) {
    ASSERT_EQ(v.size(), static_cast<size_t>(kPerThread));
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    EXPECT_EQ(std::adjacent_find(v.begin(), v.end()), v.end());  // strictly increasing
    all.insert(v.begin(), v.end());
  }
  ASSERT_EQ(all.size(), kTotal);  // distinct across threads
  EXPECT_EQ(*all.begin(), 1u);
  EXPECT_EQ(*all.rbegin(), kTotal);

  // Recovery finds every returned record, in log order == seq order.
  auto wal = OpenOrDie(tmp.path(), {}, clock);
  ASSERT_TRUE(wal);
  EXPECT_FALSE(wal->recovery_report().data_loss());
  EXPECT_EQ(wal->last_seq(), kTotal);
  RecoveredState st = wal->TakeRecoveredState();
  std::vector<uint64_t> logged;
  for (const WalRecord& r : st.since_checkpoint) {
    if (r.type == RecordType::kEvent) {
      logged.push_back(r.seq);
    }
  }
  ASSERT_EQ(logged.size(), kTotal);
  for (size_t i = 0; i < logged.size(); ++i) {
    ASSERT_EQ(logged[i], i + 1) << "log order differs from seq order at record " << i;
  }
}

TEST(WalGroupCommit, FailedSyncFailsEveryWaiterAndEveryLaterCall) {
  TempDir tmp;
  ManualClock clock;
  constexpr int kThreads = 16, kPerThread = 500;
  constexpr uint64_t kFailingSync = 20;  // the 20th batch fdatasync fails
  auto wal = OpenOrDie(tmp.path(), {}, clock);
  ASSERT_TRUE(wal);
  std::atomic<uint64_t> sync_calls{0};
  std::atomic<uint64_t> appenders_at_failure{0};
  WalTestPeer::SetSync(*wal, [&](int fd, const std::string& path) -> Status {
    uint64_t n = sync_calls.fetch_add(1) + 1;
    if (n < kFailingSync) {
      return DataSync(fd, path);
    }
    // Nothing completes while this sync runs, so every appender ends up
    // queued behind it: the failure meets a full set of waiters. Bounded.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (WalTestPeer::Appenders(*wal) < static_cast<uint64_t>(kThreads) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    appenders_at_failure = WalTestPeer::Appenders(*wal);
    return Status::Unavailable("injected fdatasync failure");
  });

  std::vector<std::vector<uint64_t>> ok_seqs(kThreads);
  std::vector<Status> errors(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Result<uint64_t> s = wal->AppendEvent(MakeEvent(t * kPerThread + i));
        if (!s.ok()) {
          errors[t] = s.status();
          return;
        }
        ok_seqs[t].push_back(*s);
      }
    });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  EXPECT_EQ(sync_calls.load(), kFailingSync);  // no write after the failure
  EXPECT_EQ(appenders_at_failure.load(), static_cast<uint64_t>(kThreads));
  EXPECT_EQ(wal->stats().syncs, kFailingSync - 1);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t].code(), StatusCode::kFailedPrecondition) << "thread " << t;
    EXPECT_NE(errors[t].message().find("injected fdatasync failure"), std::string::npos)
        << errors[t].ToString();
  }

  // Every later call fails the same way, and writes nothing.
  auto carries_first_error = [](const Status& s) {
    return s.code() == StatusCode::kFailedPrecondition &&
           s.message().find("injected fdatasync failure") != std::string::npos;
  };
  EXPECT_TRUE(carries_first_error(wal->AppendEvent(MakeEvent(1)).status()));
  EXPECT_TRUE(carries_first_error(wal->Append(RecordType::kState, "s").status()));
  EXPECT_TRUE(carries_first_error(wal->Checkpoint("cp")));
  EXPECT_TRUE(carries_first_error(wal->MarkAcked(1)));
  EXPECT_TRUE(carries_first_error(wal->MarkAckedLazy(1)));
  EXPECT_TRUE(carries_first_error(wal->AdvanceTo(1'000'000)));
  EXPECT_EQ(sync_calls.load(), kFailingSync);
  Status closed = wal->Close();
  EXPECT_EQ(closed.code(), StatusCode::kUnavailable);  // the first error itself
  EXPECT_NE(closed.message().find("injected fdatasync failure"), std::string::npos);
  wal.reset();

  // Reopened (the flock was released): every acknowledged record is there.
  std::set<uint64_t> acknowledged;
  for (const auto& v : ok_seqs) {
    acknowledged.insert(v.begin(), v.end());
  }
  ASSERT_FALSE(acknowledged.empty());
  wal = OpenOrDie(tmp.path(), {}, clock);
  ASSERT_TRUE(wal);
  Result<std::vector<Event>> events = wal->ReadUnacked();
  ASSERT_TRUE(events.ok());
  std::set<uint64_t> present;
  for (const Event& e : *events) {
    present.insert(e.sequence_number);
  }
  for (uint64_t s : acknowledged) {
    EXPECT_TRUE(present.count(s)) << "acknowledged seq " << s << " lost";
  }
  Result<uint64_t> next = wal->AppendEvent(MakeEvent(0));
  ASSERT_TRUE(next.ok());
  EXPECT_GT(*next, *acknowledged.rbegin());
}

// QueueEvents writes and syncs nothing itself: its records ride with the
// next group commit, whoever leads it, and AwaitDurable then returns with
// no fdatasync of its own; alone, AwaitDurable writes them. A failed WAL
// refuses both.
TEST(WalGroupCommit, QueuedEventsRideAlongWithTheNextCommit) {
  TempDir tmp;
  ManualClock clock;
  auto wal = OpenOrDie(tmp.path(), {}, clock);
  ASSERT_TRUE(wal);
  Result<Wal::Queued> a = wal->QueueEvents({MakeEvent(1), MakeEvent(2)});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->seqs, (std::vector<uint64_t>{1, 2}));
  Result<Wal::Queued> b = wal->QueueEvents({MakeEvent(3)});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->seqs, (std::vector<uint64_t>{3}));
  EXPECT_EQ(wal->stats().syncs, 0u);  // nothing written yet
  EXPECT_EQ(wal->stats().records, 0u);
  // A plain append leads the next commit: one fdatasync for all four.
  Result<uint64_t> c = wal->AppendEvent(MakeEvent(4));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, 4u);
  EXPECT_EQ(wal->stats().syncs, 1u);
  EXPECT_EQ(wal->stats().records, 4u);
  EXPECT_TRUE(wal->AwaitDurable(a->ticket).ok());
  EXPECT_TRUE(wal->AwaitDurable(b->ticket).ok());
  EXPECT_EQ(wal->stats().syncs, 1u);  // already durable: no second sync
  // Alone, AwaitDurable writes the queued records itself.
  Result<Wal::Queued> d = wal->QueueEvents({MakeEvent(5)});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(wal->stats().syncs, 1u);
  EXPECT_TRUE(wal->AwaitDurable(d->ticket).ok());
  EXPECT_EQ(wal->stats().syncs, 2u);
  EXPECT_EQ(wal->stats().records, 5u);
  // An invalid event queues nothing.
  Event bad = MakeEvent(6);
  bad.task_id.clear();
  EXPECT_EQ(wal->QueueEvents({bad}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wal->last_seq(), 5u);

  // After a failed fdatasync, waiting for a queued record reports it.
  WalTestPeer::SetSync(*wal, [](int, const std::string&) -> Status {
    return Status::Unavailable("injected fdatasync failure");
  });
  Result<Wal::Queued> e = wal->QueueEvents({MakeEvent(7)});
  ASSERT_TRUE(e.ok());
  Status waited = wal->AwaitDurable(e->ticket);
  EXPECT_EQ(waited.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(waited.message().find("injected fdatasync failure"), std::string::npos);
  EXPECT_EQ(wal->QueueEvents({MakeEvent(8)}).status().code(), StatusCode::kFailedPrecondition);
  (void)wal->Close();
  wal.reset();

  wal = OpenOrDie(tmp.path(), {}, clock);
  ASSERT_TRUE(wal);
  Result<std::vector<Event>> events = wal->ReadUnacked();
  ASSERT_TRUE(events.ok());
  ASSERT_GE(events->size(), 5u);  // the five made durable (the sixth's bytes may be there)
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ((*events)[i].sequence_number, i + 1);
}

// Close writes what QueueEvents left queued.
TEST(WalGroupCommit, CloseWritesQueuedEvents) {
  TempDir tmp;
  ManualClock clock;
  auto wal = OpenOrDie(tmp.path(), {}, clock);
  ASSERT_TRUE(wal);
  ASSERT_TRUE(wal->QueueEvents({MakeEvent(1), MakeEvent(2)}).ok());
  ASSERT_TRUE(wal->Close().ok());
  wal.reset();
  wal = OpenOrDie(tmp.path(), {}, clock);
  ASSERT_TRUE(wal);
  Result<std::vector<Event>> events = wal->ReadUnacked();
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ(wal->last_seq(), 2u);
}

// Lazy ACK records never make a write of their own; Close writes what is
// still queued, and a call racing with Close is either durable or refused.
TEST(WalGroupCommit, CloseWritesLazyAcksAndRacingCallsAreDurableOrRefused) {
  TempDir tmp;
  ManualClock clock;
  constexpr int kThreads = 8, kMaxPerThread = 100000;  // Close ends them much earlier
  std::vector<std::vector<uint64_t>> ok_seqs(kThreads);
  uint64_t lazy_ack = 0;
  {
    auto wal = OpenOrDie(tmp.path(), {}, clock);
    ASSERT_TRUE(wal);
    ASSERT_TRUE(wal->AppendEvent(MakeEvent(0)).ok());
    const uint64_t syncs = wal->stats().syncs;
    ASSERT_TRUE(wal->MarkAckedLazy(1).ok());
    ASSERT_TRUE(wal->MarkAckedLazy(1).ok());  // at the watermark: a no-op
    EXPECT_EQ(wal->stats().syncs, syncs);     // queued, not written
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kMaxPerThread; ++i) {
          Result<uint64_t> s = wal->AppendEvent(MakeEvent(t * kMaxPerThread + i));
          if (!s.ok()) {
            EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition) << s.status().ToString();
            return;
          }
          ok_seqs[t].push_back(*s);
        }
      });
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (wal->stats().syncs < syncs + 20 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_GE(wal->stats().syncs, syncs + 20);
    lazy_ack = wal->last_seq();
    ASSERT_TRUE(wal->MarkAckedLazy(lazy_ack).ok());
    ASSERT_TRUE(wal->Close().ok());
    for (std::thread& th : threads) {
      th.join();
    }
    EXPECT_EQ(wal->AppendEvent(MakeEvent(1)).status().code(), StatusCode::kFailedPrecondition);
  }
  auto wal = OpenOrDie(tmp.path(), {}, clock);
  ASSERT_TRUE(wal);
  EXPECT_FALSE(wal->recovery_report().data_loss());
  EXPECT_EQ(wal->recovery_report().bytes_truncated, 0u);  // Close left no half batch
  EXPECT_EQ(wal->acked_seq(), lazy_ack);  // the last lazy ACK was written by a batch or Close
  std::set<uint64_t> logged;
  for (const WalRecord& r : wal->TakeRecoveredState().since_checkpoint) {
    if (r.type == RecordType::kEvent) {
      logged.insert(r.seq);
    }
  }
  size_t acknowledged = 0;
  for (const auto& v : ok_seqs) {
    acknowledged += v.size();
    for (uint64_t s : v) {
      EXPECT_TRUE(logged.count(s)) << "acknowledged seq " << s << " lost";
    }
  }
  EXPECT_GT(acknowledged, 0u);
}

}  // namespace
}  // namespace apollo::wal
