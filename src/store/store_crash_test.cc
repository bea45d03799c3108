// Conformance, part 3: kill -9 in the middle of group commit.
//
// A child process applies batches from several threads (so commits are
// shared) and reports each acknowledged batch through a pipe. The parent
// SIGKILLs it mid-run, reopens the store and checks: every acknowledged event
// is there, and every batch is either wholly applied or not at all.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "store/testing/store_fixture.h"

namespace apollo::store::testing {
namespace {

constexpr int kBatches = 120;
constexpr int kBatchSize = 25;
constexpr int kThreads = 3;
constexpr int kKillAfterAcks = 30;

std::string TaskName(int batch, int i) {
  return "k" + std::to_string(batch) + "-" + std::to_string(i);
}
std::string NodeName(int batch) { return "kn" + std::to_string(batch % kThreads); }

// The child: never returns. Thread t applies batches t, t + kThreads, ...
[[noreturn]] void RunChild(const std::string& url, const Clock& clock, int ack_fd) {
  Result<std::unique_ptr<StateStore>> store = OpenStateStore(url, {}, clock);
  if (!store.ok()) _exit(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t seq = 0;
      for (int b = t; b < kBatches; b += kThreads) {
        std::vector<Event> events;
        for (int i = 0; i < kBatchSize; ++i) {
          Event e;
          e.task_id = TaskName(b, i);
          e.node_id = NodeName(b);
          e.sequence_number = ++seq;
          e.attempt = 1;
          e.type = EventType::kAccepted;
          events.push_back(std::move(e));
        }
        Result<ApplyResult> r = (*store)->Apply(std::move(events));
        if (!r.ok()) _exit(3);
        int32_t acked = b;
        if (write(ack_fd, &acked, sizeof acked) != sizeof acked) _exit(4);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  _exit(0);
}

TEST_P(StoreConformanceTest, KillNineMidGroupCommitLosesNothingAcknowledged) {
  std::vector<NewTask> tasks;
  std::vector<TransitionRequest> dispatch;
  for (int b = 0; b < kBatches; ++b) {
    for (int i = 0; i < kBatchSize; ++i) {
      tasks.push_back({Spec(TaskName(b, i), {NodeName(b)}), {NodeName(b)}});
      dispatch.push_back(Req(TaskName(b, i), NodeName(b), TaskState::kDispatched, Cause::kDispatch));
    }
  }
  ASSERT_TRUE(store().CreateTasks(tasks).ok());
  ASSERT_TRUE(store().Transition(dispatch).ok());
  store_.reset();  // the child is the only writer

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    RunChild(url_, clock_, fds[1]);
  }
  close(fds[1]);
  std::set<int> acked;
  int32_t b = 0;
  while (static_cast<int>(acked.size()) < kKillAfterAcks && read(fds[0], &b, sizeof b) == sizeof b) {
    acked.insert(b);
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  // Acks written before the kill are still in the pipe: they count too.
  while (read(fds[0], &b, sizeof b) == sizeof b) acked.insert(b);
  close(fds[0]);
  ASSERT_GE(static_cast<int>(acked.size()), kKillAfterAcks);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child finished before the kill; exit "
                                    << WEXITSTATUS(wstatus);

  Reopen();
  int whole = 0;
  for (int batch = 0; batch < kBatches; ++batch) {
    int running = 0;
    for (int i = 0; i < kBatchSize; ++i) {
      running += Row(TaskName(batch, i), NodeName(batch)).state == TaskState::kRunning;
    }
    EXPECT_TRUE(running == 0 || running == kBatchSize) << "batch " << batch << " half applied";
    if (acked.count(batch)) {
      EXPECT_EQ(running, kBatchSize) << "acked batch " << batch << " lost";
    }
    whole += running == kBatchSize;
  }
  EXPECT_GE(whole, static_cast<int>(acked.size()));
  // The high-water marks survived with the rows they cover.
  for (int t = 0; t < kThreads; ++t) {
    uint64_t hwm = *store().HighestStoredSeq(NodeName(t));
    int applied_batches = 0;
    for (int batch = t; batch < kBatches; batch += kThreads) {
      applied_batches += Row(TaskName(batch, 0), NodeName(batch)).state == TaskState::kRunning;
    }
    EXPECT_EQ(hwm, static_cast<uint64_t>(applied_batches * kBatchSize)) << NodeName(t);
  }
}

}  // namespace
}  // namespace apollo::store::testing
