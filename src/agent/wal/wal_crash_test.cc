// kill -9 of a real process in the middle of a burst of durable appends.
//
// A forked child appends events from several threads and, after each
// AppendEvent returns (the record is durable), writes the seq to a pipe. The
// parent SIGKILLs it mid-burst, reopens the WAL and checks that every seq the
// child was told is durable is present, and that new seqs continue above all
// of them.

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>

#include "agent/wal/wal.h"
#include "agent/wal/wal_test_util.h"

namespace apollo::wal {
namespace {

using testing::MakeEvent;
using testing::TempDir;

constexpr int kChildThreads = 8;
constexpr int kMaxPerThread = 100000;  // bounds the child if the kill never comes

// Runs in the child; never returns.
[[noreturn]] void ChildMain(const std::string& dir, int fd) {
  ManualClock clock;
  WalOptions opts;
  opts.segment_size = 64 << 10;  // several rotations during the burst
  Result<std::unique_ptr<Wal>> wal = Wal::Open(dir, opts, clock);
  if (!wal.ok()) {
    _exit(3);
  }
  std::vector<std::thread> threads;
  threads.reserve(kChildThreads);
  for (int t = 0; t < kChildThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kMaxPerThread; ++i) {
        Result<uint64_t> seq = (*wal)->AppendEvent(MakeEvent(t * kMaxPerThread + i));
        if (!seq.ok()) {
          _exit(4);
        }
        uint64_t v = *seq;
        if (write(fd, &v, sizeof(v)) != sizeof(v)) {
          _exit(5);  // atomic: < PIPE_BUF
        }
      }
    });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  _exit(0);
}

// Reads seqs from `fd` until `want` arrived (or EOF / 20 s without data).
void ReadSeqs(int fd, size_t want, std::vector<uint64_t>* out) {
  uint64_t buf[512];
  while (out->size() < want) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20000) <= 0) {
      return;
    }
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) {
      return;
    }
    ASSERT_EQ(n % 8, 0);  // 8-byte writes to a pipe are never split
    out->insert(out->end(), buf, buf + n / 8);
  }
}

// One crash round: returns the seqs the child saw acknowledged as durable.
std::vector<uint64_t> CrashChildMidBurst(const std::string& dir, size_t kill_after) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  // No Wal (no thread) is open in this process here, so fork is safe.
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    ChildMain(dir, fds[1]);
  }
  close(fds[1]);
  std::vector<uint64_t> durable;
  ReadSeqs(fds[0], kill_after, &durable);
  EXPECT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child ended early";
  ReadSeqs(fds[0], SIZE_MAX, &durable);  // what it wrote before dying
  close(fds[0]);
  EXPECT_GE(durable.size(), kill_after);
  return durable;
}

TEST(WalCrash, KillNineMidBurstLosesNothingDurable) {
  TempDir tmp;
  uint64_t floor = 0;  // every seq handed out so far is <= floor
  for (int round = 0; round < 3; ++round) {
    std::vector<uint64_t> durable = CrashChildMidBurst(tmp.path(), 2000);
    ASSERT_FALSE(durable.empty());
    for (uint64_t s : durable) {
      EXPECT_GT(s, floor) << "seq repeated across a restart";
    }
    uint64_t max_durable = *std::max_element(durable.begin(), durable.end());

    ManualClock clock;
    Result<std::unique_ptr<Wal>> wal = Wal::Open(tmp.path(), {}, clock);
    ASSERT_TRUE(wal.ok()) << wal.status().ToString();
    EXPECT_FALSE((*wal)->recovery_report().data_loss()) << (*wal)->recovery_report().ToString();
    Result<std::vector<Event>> events = (*wal)->ReadUnacked();
    ASSERT_TRUE(events.ok());
    std::set<uint64_t> present;
    for (const Event& e : *events) {
      present.insert(e.sequence_number);
    }
    size_t missing = 0;
    for (uint64_t s : durable) {
      missing += present.count(s) == 0;
    }
    EXPECT_EQ(missing, 0u) << "durable seqs lost in round " << round;
    EXPECT_GE((*wal)->last_seq(), max_durable);
    Result<uint64_t> next = (*wal)->AppendEvent(MakeEvent(0));
    ASSERT_TRUE(next.ok());
    EXPECT_GT(*next, max_durable);
    floor = *next;
  }
}

// A real write failure: the child's file-size limit makes write(2) fail with
// EFBIG partway through a segment. The WAL must fail the caller, refuse all
// later appends, and a reopen (without the limit) must recover every record
// that had been acknowledged.
struct FailureReport {
  uint64_t last_ok_seq = 0;
  int first_error = 0;  // StatusCode of the failing append
  int later_error = 0;  // StatusCode of the append after it
};

[[noreturn]] void FailingChildMain(const std::string& dir, int fd) {
  signal(SIGXFSZ, SIG_IGN);  // get EFBIG instead of being killed
  // Past the first chunk of preallocated zeros (Wal keeps them ahead of the
  // log), so the failure comes when the log needs the next chunk.
  const rlim_t max_file = kPreallocBytes + (64 << 10);
  rlimit lim{max_file, max_file};
  if (setrlimit(RLIMIT_FSIZE, &lim) != 0) {
    _exit(3);
  }
  ManualClock clock;
  Result<std::unique_ptr<Wal>> wal = Wal::Open(dir, {}, clock);
  if (!wal.ok()) {
    _exit(4);
  }
  FailureReport rep;
  for (int i = 0; i < 100000; ++i) {
    Result<uint64_t> seq = (*wal)->AppendEvent(MakeEvent(i));
    if (!seq.ok()) {
      rep.first_error = static_cast<int>(seq.status().code());
      break;
    }
    rep.last_ok_seq = *seq;
  }
  rep.later_error = static_cast<int>((*wal)->AppendEvent(MakeEvent(0)).status().code());
  if (write(fd, &rep, sizeof(rep)) != sizeof(rep)) {
    _exit(5);
  }
  _exit(0);
}

TEST(WalCrash, WriteErrorIsStickyAndAcknowledgedRecordsSurvive) {
  TempDir tmp;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();  // no Wal thread runs in this process here
  if (pid == 0) {
    close(fds[0]);
    FailingChildMain(tmp.path(), fds[1]);
  }
  close(fds[1]);
  FailureReport rep;
  pollfd p{fds[0], POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 60000), 1);
  ASSERT_EQ(read(fds[0], &rep, sizeof(rep)), static_cast<ssize_t>(sizeof(rep)));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_GT(rep.last_ok_seq, 100u);
  EXPECT_EQ(rep.first_error, static_cast<int>(StatusCode::kFailedPrecondition));
  EXPECT_EQ(rep.later_error, static_cast<int>(StatusCode::kFailedPrecondition));

  ManualClock clock;
  Result<std::unique_ptr<Wal>> wal = Wal::Open(tmp.path(), {}, clock);
  ASSERT_TRUE(wal.ok()) << wal.status().ToString();
  EXPECT_FALSE((*wal)->recovery_report().data_loss());
  Result<std::vector<Event>> events = (*wal)->ReadUnacked();
  ASSERT_TRUE(events.ok());
  ASSERT_GE(events->size(), rep.last_ok_seq);
  for (uint64_t i = 0; i < rep.last_ok_seq; ++i) {
    EXPECT_EQ((*events)[i].sequence_number, i + 1);
  }
  EXPECT_GT(*(*wal)->AppendEvent(MakeEvent(0)), rep.last_ok_seq);
}

}  // namespace
}  // namespace apollo::wal
